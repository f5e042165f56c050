-- webhooks_watched returns those of p_program (repeats allowed) that have a webhook endpoint, enabled or
-- not; NULL when none has. The triggers ask it first, so that a program without endpoints pays one index
-- probe per program a statement touched, and nothing more.
CREATE OR REPLACE FUNCTION webhooks_watched(p_program bigint[])
RETURNS bigint[]
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN (SELECT array_agg(d.p) FROM (SELECT DISTINCT p FROM unnest(p_program) AS u(p)) d
        WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.program_id = d.p));
END $$;
