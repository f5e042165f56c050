DROP TABLE idempotency_keys;
DROP TABLE commission_clawbacks;
DROP INDEX commissions_hold_idx;
DROP INDEX commissions_unfilled_idx;
DROP INDEX commissions_open_idx;
DROP INDEX commissions_payout_idx;
DROP INDEX commissions_program_list_idx;
UPDATE commissions SET status = CASE WHEN reversed_amount_cents = amount_cents THEN 'reversed'
    WHEN reversed_amount_cents > 0 THEN 'partially_reversed' ELSE 'pending' END
    WHERE status NOT IN ('pending', 'partially_reversed', 'reversed');
ALTER TABLE commissions
    DROP CONSTRAINT commissions_payout_check,
    DROP CONSTRAINT commissions_rejected_check,
    DROP COLUMN paid_at,
    DROP COLUMN payout_id,
    DROP COLUMN rejected_reason,
    DROP COLUMN rejected_at,
    DROP COLUMN approved_at,
    DROP COLUMN available_on,
    DROP CONSTRAINT commissions_status_check,
    ADD CONSTRAINT commissions_status_check CHECK (status IN ('pending', 'partially_reversed', 'reversed'));
DROP TABLE payouts;
ALTER TABLE programs DROP COLUMN payout_minimum_cents, DROP COLUMN commission_approval, DROP COLUMN hold_days;
