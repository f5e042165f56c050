-- sales_record writes the planned sales (parallel arrays, position = ord): each sale whose customer is
-- still at the version its decision rested on (locked meanwhile) or is made now, and whose
-- transaction_id is free in its program, with its commission (p_commission -1: none), then converts the
-- customer, its leads and its click through their owners' functions. It returns the sales written; a
-- missing ord was not written (decide it again). One statement for the caller: all or nothing.
CREATE OR REPLACE FUNCTION sales_record(p_program bigint[], p_customer bigint[], p_version text[], p_customer_key text[],
    p_click_ref bigint[], p_click_id text[], p_partner bigint[], p_partner_program bigint[], p_customer_test boolean[],
    p_txn text[], p_amount bigint[], p_currency text[], p_sale_type text[], p_recurring boolean[], p_provider text[],
    p_payment_id text[], p_livemode text[], p_event_name text[], p_subscription text[], p_interval text[],
    p_source text[], p_sale_date timestamptz[], p_test boolean[], p_commission bigint[])
RETURNS TABLE (ord bigint, sale_id bigint, commission_id bigint, amount_cents bigint, reversed_amount_cents bigint,
    currency text, status text)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
#variable_conflict use_column
DECLARE
    locked   bigint[];
    buyers   bigint[];
    o_ord    bigint[];
    o_sale   bigint[];
    o_comm   bigint[];
    o_amount bigint[];
    o_rev    bigint[];
    o_cur    text[];
    o_status text[];
    o_buyer  bigint[];
    o_click  bigint[];
    o_date   timestamptz[];
BEGIN
    locked := attribution_lock_unchanged(p_customer, p_version);
    -- Each row's buyer: its locked customer, or the one made now from its click; 0 when neither.
    WITH made AS (
        SELECT * FROM attribution_create_converted(p_customer, p_program, p_customer_key, p_click_ref, p_partner,
            p_partner_program, p_customer_test, p_sale_date)
    )
    SELECT array_agg(COALESCE(CASE WHEN i.customer_id = ANY (locked) THEN i.customer_id END, m.id, 0) ORDER BY i.ord) INTO buyers
    FROM unnest(p_program, p_customer, p_customer_key, p_click_ref) WITH ORDINALITY AS i(program_id, customer_id, customer_key, click_ref, ord)
    LEFT JOIN made m ON i.customer_id = 0 AND m.program_id = i.program_id AND m.click_ref = i.click_ref
        AND m.customer_key IS NOT DISTINCT FROM NULLIF(i.customer_key, '');

    WITH input AS (
        SELECT * FROM unnest(buyers, p_program, p_click_ref, p_click_id, p_partner, p_partner_program, p_txn, p_amount,
            p_currency, p_sale_type, p_recurring, p_provider, p_payment_id, p_livemode, p_event_name, p_subscription,
            p_interval, p_source, p_sale_date, p_test, p_commission)
        WITH ORDINALITY AS t(buyer, program_id, click_ref, click_id, partner_id, partner_program_id, txn, amount_cents,
            currency, sale_type, is_recurring, provider, provider_payment_id, livemode, event_name, subscription_id,
            subscription_interval, source, sale_date, is_test, commission_cents, ord)
    ), sale AS (
        INSERT INTO sales (program_id, customer_id, partner_id, click_ref, click_id, processor_event_id, amount_cents,
            currency, sale_type, is_recurring, provider, provider_payment_id, livemode, event_name, subscription_id,
            subscription_interval, source, sale_date, is_test)
        SELECT i.program_id, i.buyer, i.partner_id, NULLIF(i.click_ref, 0), NULLIF(i.click_id, ''), i.txn, i.amount_cents,
            i.currency, i.sale_type, i.is_recurring, NULLIF(i.provider, ''), NULLIF(i.provider_payment_id, ''),
            NULLIF(i.livemode, '')::boolean, NULLIF(i.event_name, ''), NULLIF(i.subscription_id, ''),
            NULLIF(i.subscription_interval, ''), i.source, i.sale_date, i.is_test
        FROM input i WHERE i.buyer <> 0
        ON CONFLICT (program_id, processor_event_id) DO NOTHING
        RETURNING id, program_id, processor_event_id, customer_id, click_ref, sale_date
    ), commission AS (
        INSERT INTO commissions (sale_id, program_id, partner_id, partner_program_id, amount_cents, currency, is_test)
        SELECT s.id, i.program_id, i.partner_id, i.partner_program_id, i.commission_cents, i.currency, i.is_test
        FROM sale s JOIN input i ON i.program_id = s.program_id AND i.txn = s.processor_event_id
        WHERE i.commission_cents <> -1
        RETURNING id, sale_id, amount_cents, reversed_amount_cents, currency, status
    )
    SELECT array_agg(i.ord), array_agg(s.id), array_agg(c.id), array_agg(c.amount_cents), array_agg(c.reversed_amount_cents),
        array_agg(c.currency), array_agg(c.status), array_agg(s.customer_id), array_agg(s.click_ref) FILTER (WHERE s.click_ref IS NOT NULL),
        array_agg(s.sale_date)
    INTO o_ord, o_sale, o_comm, o_amount, o_rev, o_cur, o_status, o_buyer, o_click, o_date
    FROM input i JOIN sale s ON s.program_id = i.program_id AND s.processor_event_id = i.txn
    LEFT JOIN commission c ON c.sale_id = s.id;

    IF o_sale IS NULL THEN
        RETURN;
    END IF;
    PERFORM attribution_convert(o_buyer, o_date);
    PERFORM leads_convert(o_buyer);
    IF o_click IS NOT NULL THEN
        PERFORM clicks_convert(o_click);
    END IF;
    RETURN QUERY SELECT * FROM unnest(o_ord, o_sale, o_comm, o_amount, o_rev, o_cur, o_status);
END $$;
