-- performance_on_clawback takes a clawback (what a refund takes back of a commission already in a
-- payout or paid) off the performance counts' commission, on its sale's UTC day: a statement-level
-- trigger on commission_clawbacks, which are only ever inserted.
CREATE OR REPLACE FUNCTION performance_on_clawback() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO performance_deltas (program_id, day, partner_id, currency, commission_cents)
    SELECT n.program_id, (s.sale_date AT TIME ZONE 'UTC')::date, n.partner_id, n.currency, -sum(n.amount_cents)
    FROM new_rows n JOIN commissions c ON c.id = n.commission_id JOIN sales s ON s.id = c.sale_id
    WHERE NOT n.is_test GROUP BY 1, 2, 3, 4;
    RETURN NULL;
END $$;
