-- webhooks_payout_data is each payout as the API shows it (Payout; pkg/ledger's payoutColumns).
CREATE OR REPLACE FUNCTION webhooks_payout_data(p_ids bigint[])
RETURNS TABLE (id bigint, program_id bigint, is_test boolean, data jsonb)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY SELECT o.id, o.program_id, false, jsonb_build_object('id', o.id, 'program_id', o.program_id,
        'partner_id', o.partner_id, 'partner_name', pa.name, 'partner_email', pa.email, 'currency', o.currency,
        'amount_cents', o.amount_cents, 'commission_count', o.commission_count, 'clawback_cents', o.clawback_cents,
        'status', o.status, 'external_reference', o.external_reference, 'failure_reason', o.failure_reason,
        'created_at', o.created_at, 'paid_at', o.paid_at, 'is_test', false)
    FROM payouts o JOIN partners pa ON pa.id = o.partner_id WHERE o.id = ANY (p_ids);
END $$;
