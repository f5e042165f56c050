-- ledger_refund writes what a refund (p_refund, just recorded) does to its sale's commission, as
-- pkg/ledger.Refund decided it on the commission locked by ledger_lock_unchanged: its reversed total and
-- status (a commission not yet in a payout), or a clawback of p_clawback cents against its partner (one in
-- a payout or paid, which is never edited). It returns the commission as it now stands, its status
-- effective at p_now and its clawbacks summed.
CREATE OR REPLACE FUNCTION ledger_refund(p_commission bigint, p_refund bigint, p_reversed bigint, p_status text,
    p_clawback bigint, p_now timestamptz)
RETURNS TABLE (id bigint, amount_cents bigint, reversed_amount_cents bigint, currency text, status text,
    clawback_cents bigint)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
#variable_conflict use_column
BEGIN
    IF p_clawback > 0 THEN
        INSERT INTO commission_clawbacks (commission_id, refund_id, program_id, partner_id, currency, amount_cents, is_test)
        SELECT c.id, p_refund, c.program_id, c.partner_id, c.currency, p_clawback, c.is_test
        FROM commissions c WHERE c.id = p_commission;
    ELSE
        -- An approval the background pass has not written down yet is written with the refund's status.
        UPDATE commissions c SET reversed_amount_cents = p_reversed, status = p_status,
            approved_at = CASE WHEN p_status = 'approved' THEN COALESCE(c.approved_at, c.available_on) ELSE c.approved_at END,
            updated_at = now()
        WHERE c.id = p_commission AND c.status NOT IN ('in_payout', 'paid', 'rejected');
    END IF;
    RETURN QUERY
    SELECT c.id, c.amount_cents, c.reversed_amount_cents, c.currency,
        ledger_status(c.status, c.available_on, p.commission_approval, p_now),
        COALESCE((SELECT sum(k.amount_cents) FROM commission_clawbacks k WHERE k.commission_id = c.id), 0)::bigint
    FROM commissions c JOIN programs p ON p.id = c.program_id WHERE c.id = p_commission;
END $$;
