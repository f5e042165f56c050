-- ledger_status is the one definition of a commission's effective status: with the program's approval
-- auto, a commission still in its hold (pending or partially_reversed) is approved from the instant its
-- available_on has passed (p_now, the server's clock), whether or not the background pass has written it
-- down yet.
--
-- A SQL function of one expression, IMMUTABLE: PostgreSQL inlines it into the queries that ask it.
CREATE OR REPLACE FUNCTION ledger_status(p_status text, p_available_on timestamptz, p_approval text, p_now timestamptz)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN p_status IN ('pending', 'partially_reversed') AND p_approval = 'auto' AND p_available_on <= p_now
        THEN 'approved' ELSE p_status END
$$;
