-- ledger_create makes the commissions of sales just written (one array per input, position = ord): each
-- pending, available on its sale's date plus its program's hold_days, and returns them with their
-- effective status at p_now (ledger_status: approved at once when the hold has already passed under auto
-- approval). Called by pkg/sales' sales_record inside the sale's statement. A partner banned from the
-- program earns nothing: their commission is made rejected ('partner banned').
CREATE OR REPLACE FUNCTION ledger_create(p_sale bigint[], p_program bigint[], p_partner bigint[],
    p_partner_program bigint[], p_amount bigint[], p_currency text[], p_test boolean[], p_sale_date timestamptz[],
    p_now timestamptz)
RETURNS TABLE (sale_id bigint, id bigint, amount_cents bigint, reversed_amount_cents bigint, currency text, status text)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH made AS (
        INSERT INTO commissions AS c (sale_id, program_id, partner_id, partner_program_id, amount_cents, currency, is_test,
            available_on, status, rejected_reason, rejected_at)
        SELECT i.sale_id, i.program_id, i.partner_id, i.partner_program_id, i.amount_cents, i.currency, i.is_test,
            i.sale_date + make_interval(days => p.hold_days),
            CASE WHEN pp.status = 'banned' THEN 'rejected' ELSE 'pending' END,
            CASE WHEN pp.status = 'banned' THEN 'partner banned' END,
            CASE WHEN pp.status = 'banned' THEN p_now END
        FROM unnest(p_sale, p_program, p_partner, p_partner_program, p_amount, p_currency, p_test, p_sale_date)
            AS i(sale_id, program_id, partner_id, partner_program_id, amount_cents, currency, is_test, sale_date)
        JOIN programs p ON p.id = i.program_id
        LEFT JOIN partner_programs pp ON pp.id = i.partner_program_id
        RETURNING c.sale_id, c.id, c.amount_cents, c.reversed_amount_cents, c.currency, c.status, c.available_on, c.program_id
    )
    SELECT m.sale_id, m.id, m.amount_cents, m.reversed_amount_cents, m.currency,
        ledger_status(m.status, m.available_on, p.commission_approval, p_now)
    FROM made m JOIN programs p ON p.id = m.program_id;
END $$;
