DROP INDEX IF EXISTS leads_customer_idx;
