-- webhooks_commission_data is each commission as the API shows it (Commission; pkg/ledger's
-- commissionColumns, at the transaction's time).
CREATE OR REPLACE FUNCTION webhooks_commission_data(p_ids bigint[])
RETURNS TABLE (id bigint, program_id bigint, is_test boolean, data jsonb)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY SELECT c.id, c.program_id, c.is_test, jsonb_build_object('id', c.id, 'program_id', c.program_id,
        'partner_id', c.partner_id, 'sale_id', c.sale_id, 'transaction_id', s.processor_event_id,
        'amount_cents', c.amount_cents, 'reversed_amount_cents', c.reversed_amount_cents,
        'payable_cents', CASE WHEN c.status = 'rejected' THEN 0 ELSE c.amount_cents - c.reversed_amount_cents END,
        'currency', c.currency, 'status', st.status, 'available_on', c.available_on,
        'approved_at', COALESCE(c.approved_at, CASE WHEN st.status = 'approved' THEN c.available_on END),
        'rejected_reason', c.rejected_reason, 'payout_id', c.payout_id, 'paid_at', c.paid_at,
        'clawback_cents', COALESCE((SELECT sum(k.amount_cents) FROM commission_clawbacks k WHERE k.commission_id = c.id), 0),
        'is_test', c.is_test, 'created_at', c.created_at)
    FROM commissions c JOIN sales s ON s.id = c.sale_id JOIN programs p ON p.id = c.program_id
    CROSS JOIN LATERAL (SELECT ledger_status(c.status, c.available_on, p.commission_approval, now()) AS status) st
    WHERE c.id = ANY (p_ids);
END $$;
