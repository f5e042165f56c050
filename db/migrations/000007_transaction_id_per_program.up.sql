-- transaction_id (stored as processor_event_id) is unique per program, not across all programs: two
-- brands may both send `order_1001`, and neither can block, or learn of, the other's sales. Every stored
-- sale stays: globally unique ids are unique per program too. The payment webhook's refund dedupe
-- (processor_refund_id) moves to the same per-program scope, so one Stripe account connected to two
-- programs refunds each program's sale once.
ALTER TABLE sales DROP CONSTRAINT sales_processor_event_id_key;
ALTER TABLE sales ADD CONSTRAINT sales_program_transaction_key UNIQUE (program_id, processor_event_id);

ALTER TABLE refunds DROP CONSTRAINT refunds_processor_refund_id_key;
ALTER TABLE refunds ADD CONSTRAINT refunds_program_processor_refund_key UNIQUE (program_id, processor_refund_id);
