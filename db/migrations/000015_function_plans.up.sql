-- The sale, lead, refund and key-lookup functions (000010, 000013, 000014) find every row they read or
-- write by a key, and PostgreSQL keeps their plans for the life of a connection. A plan made while a table
-- is still nearly empty (a new deployment, the first requests after a restore) may scan that table, and
-- the connection keeps scanning it while it grows, until autovacuum's next analyze invalidates the plan:
-- make bench saw clicks_convert, planned while the first leads were recorded, take 8 ms per call at
-- 235 000 clicks, and the lead and sale routes run 100 times slower than with index plans. Sequential
-- scans are therefore priced out of these functions' own statements, so that their plans use the indexes
-- whatever the tables' size when they were made. It is a cost penalty, not a prohibition: a statement
-- with no usable index still runs. (Foreign-key checks fired at the end of a RETURN QUERY run after the
-- function returns and are planned without it.)
--
-- clicks_record keeps the default: it joins a batch to referral_links by hashing, and priced out of that
-- it cost PostgreSQL a quarter more CPU per click; its one lookup of the growing clicks table (a
-- visitor's earlier click) is planned as an index scan even on an empty table.
ALTER FUNCTION attribution_lock_unchanged SET enable_seqscan = off;
ALTER FUNCTION attribution_create_converted SET enable_seqscan = off;
ALTER FUNCTION attribution_convert SET enable_seqscan = off;
ALTER FUNCTION leads_convert SET enable_seqscan = off;
ALTER FUNCTION clicks_convert SET enable_seqscan = off;
ALTER FUNCTION sales_state SET enable_seqscan = off;
ALTER FUNCTION sales_record SET enable_seqscan = off;
ALTER FUNCTION apikeys_lookup SET enable_seqscan = off;
ALTER FUNCTION leads_state SET enable_seqscan = off;
ALTER FUNCTION attribution_create_lead SET enable_seqscan = off;
ALTER FUNCTION attribution_mark_lead SET enable_seqscan = off;
ALTER FUNCTION leads_write SET enable_seqscan = off;
ALTER FUNCTION leads_settle SET enable_seqscan = off;
ALTER FUNCTION leads_record_provisional SET enable_seqscan = off;
ALTER FUNCTION refunds_state SET enable_seqscan = off;
ALTER FUNCTION sales_refund SET enable_seqscan = off;
