-- apikeys_lookup finds the active keys among the hashes and, for each, whether its program's owner is
-- suspended (every sale and refund authenticates its key first).
CREATE OR REPLACE FUNCTION apikeys_lookup(p_hash bytea[])
RETURNS TABLE (key_hash bytea, id bigint, program_id bigint, last4 text, created_at timestamptz,
    rotation_marked_at timestamptz, rotate_by timestamptz, owner_suspended boolean)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT k.key_hash, k.id, k.program_id, k.last4, k.created_at, k.rotation_marked_at, k.rotate_by,
        EXISTS (SELECT FROM accounts_suspended_owners(p.workspace_id))
    FROM api_keys k JOIN programs p ON p.id = k.program_id
    WHERE k.key_hash = ANY (p_hash) AND k.revoked_at IS NULL;
END $$;
