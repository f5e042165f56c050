-- performance_lead_partner is the partner a lead counts for in the performance counts: its click's (in
-- clicks, or in clicks_kept once its month was dropped), else its customer's, else 0 (none). PL/pgSQL, not
-- SQL: a SQL function with subqueries is not inlined, and every call from a trigger planned its query on
-- the partitioned clicks again (a lead cost PostgreSQL twice its CPU); PL/pgSQL keeps its plans for the
-- connection's life.
CREATE OR REPLACE FUNCTION performance_lead_partner(p_click_ref bigint, p_customer bigint) RETURNS bigint
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
BEGIN
    RETURN COALESCE(
        (SELECT c.partner_id FROM clicks c WHERE c.id = p_click_ref AND c.click_month = clicks_ref_month(p_click_ref)),
        (SELECT k.partner_id FROM clicks_kept k WHERE k.id = p_click_ref),
        (SELECT cu.partner_id FROM customers cu WHERE cu.id = p_customer),
        0);
END $$;
