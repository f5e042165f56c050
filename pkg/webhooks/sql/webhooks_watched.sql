-- webhooks_watched returns those of p_program (repeats allowed) that have a webhook endpoint, enabled or
-- not; NULL when none has. The triggers ask it first, so that a program without endpoints pays one index
-- probe per program a statement touched, and nothing more. One plan for the session (force_generic_plan):
-- left to choose, PostgreSQL planned it again at every call, since a plan for the actual array (one or two
-- programs) always looks cheaper than the generic one (ten): 72 µs a call, twice per sale, in every sale
-- (docs/performance.md). Sequential scans are priced out so that a plan made on an empty table keeps the
-- index.
CREATE OR REPLACE FUNCTION webhooks_watched(p_program bigint[])
RETURNS bigint[]
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
BEGIN
    RETURN (SELECT array_agg(d.p) FROM (SELECT DISTINCT p FROM unnest(p_program) AS u(p)) d
        WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.program_id = d.p));
END $$;
