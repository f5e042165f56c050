-- events_counted is the one definition of a counted event: an event row (a click, lead or sale; leads and
-- sales have no bots: pass false) counts in the real view (p_test_view false) when it is real, in the
-- test-data view when it is a test event, and a bot's click counts in neither. The triggers that keep the
-- event counts, the events list and its daily counts, readiness and `reftrack status` all ask it.
--
-- A SQL function of one expression, IMMUTABLE: PostgreSQL inlines it, and with a constant view folds it to
-- `NOT is_test AND NOT is_bot` (or `is_test AND NOT is_bot`), so the clicks' partial indexes, whose
-- predicates are these (the schema), still serve the queries that ask it. Pass the view as a
-- constant, never a parameter.
CREATE OR REPLACE FUNCTION events_counted(p_test boolean, p_bot boolean, p_test_view boolean) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT p_test = p_test_view AND NOT p_bot
$$;
