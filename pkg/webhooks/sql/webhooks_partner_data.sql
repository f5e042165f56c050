-- webhooks_partner_data is each partner in a program (one row of partner_programs) as the API shows it
-- (Partner).
CREATE OR REPLACE FUNCTION webhooks_partner_data(p_partner_program_ids bigint[])
RETURNS TABLE (id bigint, program_id bigint, is_test boolean, data jsonb)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY SELECT pp.id, pp.program_id, false, jsonb_build_object('id', pa.id, 'name', pa.name, 'email', pa.email,
        'program_id', pp.program_id, 'partner_program_id', pp.id, 'synthetic', pa.synthetic,
        'created_at', pa.created_at, 'is_test', false)
    FROM partner_programs pp JOIN partners pa ON pa.id = pp.partner_id WHERE pp.id = ANY (p_partner_program_ids);
END $$;
