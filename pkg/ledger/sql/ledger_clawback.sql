-- ledger_clawback records a clawback of p_amount cents against the commission's partner in its currency,
-- for the refund p_refund, as ledger_refund decided and locked it; a later payout nets it.
CREATE OR REPLACE FUNCTION ledger_clawback(p_commission bigint, p_refund bigint, p_amount bigint) RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
BEGIN
    INSERT INTO commission_clawbacks (commission_id, refund_id, program_id, partner_id, currency, amount_cents, is_test)
    SELECT c.id, p_refund, c.program_id, c.partner_id, c.currency, p_amount, c.is_test
    FROM commissions c WHERE c.id = p_commission;
END $$;
