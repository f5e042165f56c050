-- ledger_create writes the commissions of sales just written (one array per input, position = ord) as
-- pkg/commission.Decide decided them: amount, status (pending, approved, or rejected with its reason),
-- the end of the hold and, when made approved, the approval's date; rejected_at is p_now. It decides
-- nothing. Called by pkg/sales' sales_record inside the sale's statement; it returns what it wrote.
CREATE OR REPLACE FUNCTION ledger_create(p_sale bigint[], p_program bigint[], p_partner bigint[],
    p_partner_program bigint[], p_amount bigint[], p_currency text[], p_test boolean[], p_status text[],
    p_available_on timestamptz[], p_approved_at timestamptz[], p_rejected_reason text[], p_now timestamptz)
RETURNS TABLE (sale_id bigint, id bigint, amount_cents bigint, reversed_amount_cents bigint, currency text, status text)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    INSERT INTO commissions AS c (sale_id, program_id, partner_id, partner_program_id, amount_cents, currency, is_test,
        status, available_on, approved_at, rejected_reason, rejected_at)
    SELECT i.sale_id, i.program_id, i.partner_id, i.partner_program_id, i.amount_cents, i.currency, i.is_test,
        i.status, i.available_on, i.approved_at, i.rejected_reason, CASE WHEN i.rejected_reason IS NOT NULL THEN p_now END
    FROM unnest(p_sale, p_program, p_partner, p_partner_program, p_amount, p_currency, p_test, p_status, p_available_on,
        p_approved_at, p_rejected_reason)
        AS i(sale_id, program_id, partner_id, partner_program_id, amount_cents, currency, is_test, status, available_on,
            approved_at, rejected_reason)
    RETURNING c.sale_id, c.id, c.amount_cents, c.reversed_amount_cents, c.currency, c.status;
END $$;
