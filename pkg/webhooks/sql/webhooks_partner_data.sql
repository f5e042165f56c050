-- webhooks_partner_data is each partner in a program (one row of partner_programs) as the API shows it
-- (Partner: with its enrollment status and its events, programs_partner_stats).
CREATE OR REPLACE FUNCTION webhooks_partner_data(p_partner_program_ids bigint[])
RETURNS TABLE (id bigint, program_id bigint, is_test boolean, data jsonb)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY SELECT pp.id, pp.program_id, false, jsonb_build_object('id', pa.id, 'name', pa.name, 'email', pa.email,
        'program_id', pp.program_id, 'partner_program_id', pp.id, 'synthetic', pa.synthetic,
        'created_at', pa.created_at, 'is_test', false,
        'status', CASE pp.status WHEN 'active' THEN 'approved' ELSE pp.status END, 'status_reason', pp.status_reason,
        'stats', jsonb_build_object('clicks', COALESCE(st.clicks, 0), 'leads', COALESCE(st.leads, 0), 'sales', COALESCE(st.sales, 0)))
    FROM partner_programs pp JOIN partners pa ON pa.id = pp.partner_id
    LEFT JOIN LATERAL programs_partner_stats(pp.program_id, ARRAY[pp.partner_id]) st ON true
    WHERE pp.id = ANY (p_partner_program_ids);
END $$;
