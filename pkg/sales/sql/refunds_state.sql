-- refunds_state reads, for each refund (one array per input, position = ord), the program's sale with
-- that transaction_id and its row version (with what its counts are kept under: its date, partner,
-- currency, test flag), its commission, whether the processor's refund id is already
-- recorded in the program (p_processor_refund_id NULL: none given, so not seen), and the reason of the
-- sale's latest refund. The commission is read as the ledger shows it at p_now (its effective status,
-- its clawbacks) with its row version. Nothing locked.
-- OFFSET 0 keeps the seen check a lookup in the index: without it, the generic plan made on an empty table hashed every refund's key instead.
CREATE OR REPLACE FUNCTION refunds_state(p_program bigint[], p_txn text[], p_processor_refund_id text[],
    p_now timestamptz)
RETURNS TABLE (ord bigint, sale_id bigint, sale_version text, sale_date timestamptz, partner_id bigint, currency text,
    sale_test boolean, amount_cents bigint, refunded_amount_cents bigint,
    commission_id bigint, commission_amount_cents bigint, commission_reversed_cents bigint, commission_currency text,
    commission_status text, commission_version text, commission_clawback_cents bigint, refund_seen boolean,
    latest_reason text)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT i.ord, s.id, s.xmin::text, s.sale_date, s.partner_id, s.currency, s.is_test, s.amount_cents, s.refunded_amount_cents,
        c.id, c.amount_cents, c.reversed_amount_cents, c.currency,
        ledger_status(c.status, c.available_on, p.commission_approval, p_now), c.xmin::text,
        CASE WHEN c.id IS NOT NULL THEN
            COALESCE((SELECT sum(k.amount_cents) FROM commission_clawbacks k WHERE k.commission_id = c.id), 0)::bigint END,
        i.refund_id IS NOT NULL AND EXISTS (SELECT 1 FROM refunds r WHERE r.program_id = i.program_id AND r.processor_refund_id = i.refund_id OFFSET 0),
        (SELECT r.reason FROM refunds r WHERE r.sale_id = s.id ORDER BY r.id DESC LIMIT 1)
    FROM unnest(p_program, p_txn, p_processor_refund_id) WITH ORDINALITY AS i(program_id, txn, refund_id, ord)
    LEFT JOIN sales s ON s.processor_event_id = i.txn AND s.program_id = i.program_id
    LEFT JOIN commissions c ON c.sale_id = s.id
    LEFT JOIN programs p ON p.id = c.program_id
    ORDER BY i.ord;
END $$;
