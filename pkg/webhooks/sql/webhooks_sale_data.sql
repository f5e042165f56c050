-- webhooks_sale_data is each sale as the events list shows it (ConversionEvent), with its partner, what
-- refunds took back so far, and is_test.
CREATE OR REPLACE FUNCTION webhooks_sale_data(p_ids bigint[])
RETURNS TABLE (id bigint, program_id bigint, is_test boolean, data jsonb)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY SELECT s.id, s.program_id, s.is_test, jsonb_build_object('id', s.id, 'event_type', 'conversion',
        'timestamp', s.sale_date, 'click_id', s.click_id, 'amount_cents', s.amount_cents, 'currency', s.currency,
        'sale_type', s.sale_type, 'payment_status', s.payment_status, 'processor_event_id', s.processor_event_id,
        'is_recurring', s.is_recurring, 'createdAt', s.created_at, 'partner_id', s.partner_id,
        'refunded_amount_cents', s.refunded_amount_cents, 'is_test', s.is_test)
    FROM sales s WHERE s.id = ANY (p_ids);
END $$;
