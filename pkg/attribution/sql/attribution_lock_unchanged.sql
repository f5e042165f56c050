-- attribution_lock_unchanged locks, in id order, the customers among ids whose row version (xmin) is
-- still the one given, and returns their ids. A customer changed since it was read (a lead, another
-- sale) is left out: what was decided on its old state is decided again. A concurrent change is waited
-- for, then seen (READ COMMITTED re-checks a locked row's newest version).
CREATE OR REPLACE FUNCTION attribution_lock_unchanged(p_id bigint[], p_version text[]) RETURNS bigint[]
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
DECLARE
    locked bigint[];
BEGIN
    SELECT array_agg(l.id) INTO locked FROM (
        SELECT cu.id FROM customers cu JOIN unnest(p_id, p_version) AS i(id, version)
            ON cu.id = i.id AND cu.xmin::text = i.version
        ORDER BY cu.id FOR UPDATE OF cu) l;
    RETURN COALESCE(locked, '{}');
END $$;
