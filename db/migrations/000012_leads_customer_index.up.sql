-- A sale marks its customer's leads converted (leads_convert, by customer_id): without an index that was
-- a scan of every lead, 2.4 ms per sale at 40 000 leads and growing with the table.
CREATE INDEX leads_customer_idx ON leads (customer_id);
