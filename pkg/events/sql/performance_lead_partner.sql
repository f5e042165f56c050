-- performance_lead_partner is the partner a lead counts for in the performance counts: its click's (in
-- clicks, or in clicks_kept once its month was dropped), else its customer's, else 0 (none).
CREATE OR REPLACE FUNCTION performance_lead_partner(p_click_ref bigint, p_customer bigint) RETURNS bigint
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT COALESCE(
        (SELECT c.partner_id FROM clicks c WHERE c.id = p_click_ref AND c.click_month = clicks_ref_month(p_click_ref)),
        (SELECT k.partner_id FROM clicks_kept k WHERE k.id = p_click_ref),
        (SELECT cu.partner_id FROM customers cu WHERE cu.id = p_customer),
        0)
$$;
