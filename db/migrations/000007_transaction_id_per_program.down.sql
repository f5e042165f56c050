-- Back to global uniqueness. This fails (and changes nothing) when two programs hold the same id: no
-- sale or refund is ever deleted to make the older schema fit.
ALTER TABLE refunds DROP CONSTRAINT refunds_program_processor_refund_key;
ALTER TABLE refunds ADD CONSTRAINT refunds_processor_refund_id_key UNIQUE (processor_refund_id);

ALTER TABLE sales DROP CONSTRAINT sales_program_transaction_key;
ALTER TABLE sales ADD CONSTRAINT sales_processor_event_id_key UNIQUE (processor_event_id);
