-- ledger_status is the one definition of a commission's effective status, read at p_now (the server's
-- clock): with the program's approval auto, a pending commission is approved from the instant its hold
-- ends (available_on), whether or not the background pass (AutoApprove) has written it down yet. Every
-- read of a commission's status asks it; nothing else decides a status in SQL (the statuses a change
-- writes are decided in Go: pkg/commission).
--
-- A SQL function of one expression, IMMUTABLE: PostgreSQL inlines it into the queries that ask it.
CREATE OR REPLACE FUNCTION ledger_status(p_status text, p_available_on timestamptz, p_approval text, p_now timestamptz)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN p_status = 'pending' AND p_approval = 'auto' AND p_available_on <= p_now
        THEN 'approved' ELSE p_status END
$$;
