-- The triggers are pkg/webhooks' (db.ApplyFunctions attaches them); their functions stay until dropped.
DROP TRIGGER IF EXISTS webhooks_leads_insert ON leads;
DROP TRIGGER IF EXISTS webhooks_sales_insert ON sales;
DROP TRIGGER IF EXISTS webhooks_sales_update ON sales;
DROP TRIGGER IF EXISTS webhooks_commissions_insert ON commissions;
DROP TRIGGER IF EXISTS webhooks_commissions_update ON commissions;
DROP TRIGGER IF EXISTS webhooks_clawbacks_insert ON commission_clawbacks;
DROP TRIGGER IF EXISTS webhooks_payouts_insert ON payouts;
DROP TRIGGER IF EXISTS webhooks_payouts_update ON payouts;
DROP TRIGGER IF EXISTS webhooks_partner_programs_insert ON partner_programs;
DROP TRIGGER IF EXISTS webhooks_partners_update ON partners;
DROP TRIGGER IF EXISTS webhooks_links_update ON referral_links;
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_events;
DROP TABLE webhook_endpoints;
