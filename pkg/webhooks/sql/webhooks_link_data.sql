-- webhooks_link_data is each link as the API shows it (Link; pkg/programs' ReferralURL for referral_url).
CREATE OR REPLACE FUNCTION webhooks_link_data(p_ids bigint[])
RETURNS TABLE (id bigint, program_id bigint, is_test boolean, data jsonb)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY SELECT l.id, l.program_id, false, jsonb_build_object('id', l.id, 'short_link', l.short_link,
        'partner_id', l.partner_id, 'program_id', l.program_id, 'enabled', l.enabled,
        'referral_url', CASE WHEN p.domain IS NULL THEN ''
            ELSE CASE WHEN p.domain LIKE 'localhost%' OR p.domain LIKE '127.0.0.1%' THEN 'http' ELSE 'https' END
                || '://' || p.domain || '/?aff=' || l.short_link END,
        'created_at', l.created_at, 'updated_at', l.updated_at, 'is_test', false)
    FROM referral_links l LEFT JOIN programs p ON p.id = l.program_id WHERE l.id = ANY (p_ids);
END $$;
