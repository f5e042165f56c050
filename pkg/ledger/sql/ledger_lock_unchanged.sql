-- ledger_lock_unchanged locks the commission if it is still at the row version (xmin) given, and says
-- whether it was: a refund decided on its state is written only then (an approval, a payout or the
-- auto-approval pass in between makes the refund decide again). A concurrent change is waited for, then
-- seen.
CREATE OR REPLACE FUNCTION ledger_lock_unchanged(p_commission bigint, p_version text) RETURNS boolean
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
DECLARE
    v_id bigint;
BEGIN
    SELECT c.id INTO v_id FROM commissions c WHERE c.id = p_commission AND c.xmin::text = p_version FOR UPDATE;
    RETURN v_id IS NOT NULL;
END $$;
