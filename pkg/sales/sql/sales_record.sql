-- sales_record writes the planned sales (one array per input, position = ord; NULL for a value not
-- sent). A sale is written when its customer (p_customer) is still at the row version its decision rested
-- on (p_version; the customer stays locked meanwhile), or, with p_customer NULL, when its customer is
-- made now from its click (p_click_ref, binding p_customer_key when given); and when its transaction_id
-- is free in its program. It is written with its commission as pkg/commission decided it (p_commission
-- cents, NULL when the sale pays none; status, hold end, approval date, rejection reason), through
-- pkg/ledger's ledger_create; then the customer, its leads and its click are converted through their
-- owners' functions, and what each counts for (p_count_*: pkg/counting's decision) is added to the counts
-- (pkg/events' performance_add). It returns the sales written; a missing ord was not written (decide it
-- again). One statement for the caller: all or nothing.
-- A failure while writing the commissions is raised with its SQLSTATE, message, detail, hint and
-- constraint, and the table commissions (the error's table field), whatever raised it: the caller tells
-- that failure from the others by the error alone.
CREATE OR REPLACE FUNCTION sales_record(p_program bigint[], p_customer bigint[], p_version text[], p_customer_key text[],
    p_click_ref bigint[], p_click_id text[], p_partner bigint[], p_partner_program bigint[], p_customer_test boolean[],
    p_txn text[], p_amount bigint[], p_currency text[], p_sale_type text[], p_recurring boolean[], p_provider text[],
    p_payment_id text[], p_livemode boolean[], p_event_name text[], p_subscription text[], p_interval text[],
    p_source text[], p_sale_date timestamptz[], p_test boolean[], p_commission bigint[], p_commission_status text[],
    p_available_on timestamptz[], p_approved_at timestamptz[], p_rejected_reason text[], p_count_sales bigint[],
    p_count_customers bigint[], p_count_revenue bigint[], p_count_commission bigint[], p_now timestamptz)
RETURNS TABLE (ord bigint, sale_id bigint, commission_id bigint, amount_cents bigint, reversed_amount_cents bigint,
    currency text, status text)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
#variable_conflict use_column
DECLARE
    locked       bigint[];
    buyers       bigint[];
    o_ord        bigint[];
    o_sale       bigint[];
    o_buyer      bigint[];
    o_click      bigint[];
    o_date       timestamptz[];
    o_pays       boolean;
    c_sale       bigint[];
    c_id         bigint[];
    c_amount     bigint[];
    c_rev        bigint[];
    c_cur        text[];
    c_status     text[];
    e_state      text;
    e_message    text;
    e_detail     text;
    e_hint       text;
    e_constraint text;
BEGIN
    locked := attribution_lock_unchanged(p_customer, p_version);
    -- Each row's buyer: its customer when locked, or the one made now from its click; NULL when neither
    -- (the customer changed, or its key was bound meanwhile), and the sale is not written.
    WITH input AS (
        SELECT * FROM unnest(p_customer, p_program, p_customer_key, p_click_ref, p_partner, p_partner_program,
            p_customer_test, p_sale_date)
        WITH ORDINALITY AS t(customer_id, program_id, customer_key, click_ref, partner_id, partner_program_id, is_test,
            sale_date, ord)
    ), to_make AS (
        SELECT array_agg(i.program_id) AS program_id, array_agg(i.customer_key) AS customer_key,
            array_agg(i.click_ref) AS click_ref, array_agg(i.partner_id) AS partner_id,
            array_agg(i.partner_program_id) AS partner_program_id, array_agg(i.is_test) AS is_test,
            array_agg(i.sale_date) AS sale_date
        FROM input i WHERE i.customer_id IS NULL
    ), made AS (
        SELECT m.* FROM to_make n CROSS JOIN LATERAL attribution_create_converted(p_program => n.program_id,
            p_key => n.customer_key, p_click_ref => n.click_ref, p_partner => n.partner_id,
            p_partner_program => n.partner_program_id, p_test => n.is_test, p_at => n.sale_date) m
        WHERE n.program_id IS NOT NULL
    )
    SELECT array_agg(CASE WHEN i.customer_id IS NULL THEN m.id WHEN i.customer_id = ANY (locked) THEN i.customer_id END
        ORDER BY i.ord) INTO buyers
    FROM input i
    LEFT JOIN made m ON i.customer_id IS NULL AND m.program_id = i.program_id AND m.click_ref = i.click_ref
        AND m.customer_key IS NOT DISTINCT FROM i.customer_key;

    WITH input AS (
        SELECT * FROM unnest(buyers, p_program, p_click_ref, p_click_id, p_partner, p_txn, p_amount, p_currency,
            p_sale_type, p_recurring, p_provider, p_payment_id, p_livemode, p_event_name, p_subscription, p_interval,
            p_source, p_sale_date, p_test, p_commission)
        WITH ORDINALITY AS t(buyer, program_id, click_ref, click_id, partner_id, txn, amount_cents, currency, sale_type,
            is_recurring, provider, provider_payment_id, livemode, event_name, subscription_id, subscription_interval,
            source, sale_date, is_test, commission_cents, ord)
    ), sale AS (
        INSERT INTO sales (program_id, customer_id, partner_id, click_ref, click_id, processor_event_id, amount_cents,
            currency, sale_type, is_recurring, provider, provider_payment_id, livemode, event_name, subscription_id,
            subscription_interval, source, sale_date, is_test)
        SELECT i.program_id, i.buyer, i.partner_id, i.click_ref, i.click_id, i.txn, i.amount_cents, i.currency,
            i.sale_type, i.is_recurring, i.provider, i.provider_payment_id, i.livemode, i.event_name, i.subscription_id,
            i.subscription_interval, i.source, i.sale_date, i.is_test
        FROM input i WHERE i.buyer IS NOT NULL
        ON CONFLICT (program_id, processor_event_id) DO NOTHING
        RETURNING id, program_id, processor_event_id, customer_id, click_ref, sale_date
    )
    SELECT array_agg(i.ord), array_agg(s.id), array_agg(s.customer_id),
        array_agg(s.click_ref) FILTER (WHERE s.click_ref IS NOT NULL), array_agg(s.sale_date),
        bool_or(i.commission_cents IS NOT NULL)
    INTO o_ord, o_sale, o_buyer, o_click, o_date, o_pays
    FROM input i JOIN sale s ON s.program_id = i.program_id AND s.processor_event_id = i.txn;

    IF o_sale IS NULL THEN
        RETURN;
    END IF;
    IF o_pays THEN
        BEGIN
            WITH paying AS (
                SELECT array_agg(w.sale_id) AS sale_id, array_agg(i.program_id) AS program_id,
                    array_agg(i.partner_id) AS partner_id, array_agg(i.partner_program_id) AS partner_program_id,
                    array_agg(i.commission_cents) AS amount, array_agg(i.currency) AS currency,
                    array_agg(i.is_test) AS is_test, array_agg(i.status) AS status,
                    array_agg(i.available_on) AS available_on, array_agg(i.approved_at) AS approved_at,
                    array_agg(i.rejected_reason) AS rejected_reason
                FROM unnest(o_ord, o_sale) AS w(ord, sale_id)
                JOIN unnest(p_program, p_partner, p_partner_program, p_commission, p_currency, p_test, p_commission_status,
                    p_available_on, p_approved_at, p_rejected_reason)
                    WITH ORDINALITY AS i(program_id, partner_id, partner_program_id, commission_cents, currency, is_test,
                        status, available_on, approved_at, rejected_reason, ord) ON i.ord = w.ord
                WHERE i.commission_cents IS NOT NULL
            )
            SELECT array_agg(c.sale_id), array_agg(c.id), array_agg(c.amount_cents), array_agg(c.reversed_amount_cents),
                array_agg(c.currency), array_agg(c.status)
            INTO c_sale, c_id, c_amount, c_rev, c_cur, c_status
            FROM paying n CROSS JOIN LATERAL ledger_create(p_sale => n.sale_id, p_program => n.program_id,
                p_partner => n.partner_id, p_partner_program => n.partner_program_id, p_amount => n.amount,
                p_currency => n.currency, p_test => n.is_test, p_status => n.status, p_available_on => n.available_on,
                p_approved_at => n.approved_at, p_rejected_reason => n.rejected_reason, p_now => p_now) c
            WHERE n.sale_id IS NOT NULL;
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_message = MESSAGE_TEXT, e_detail = PG_EXCEPTION_DETAIL,
                e_hint = PG_EXCEPTION_HINT, e_constraint = CONSTRAINT_NAME;
            RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail, HINT = e_hint,
                CONSTRAINT = e_constraint, TABLE = 'commissions';
        END;
    END IF;
    PERFORM performance_add(p_program => array_agg(i.program_id), p_hour => array_agg(i.sale_date),
        p_partner => array_agg(i.partner_id), p_currency => array_agg(i.currency), p_clicks => NULL, p_bot_clicks => NULL,
        p_leads => NULL, p_provisional_leads => NULL, p_sales => array_agg(i.sales), p_customers => array_agg(i.customers),
        p_revenue => array_agg(i.revenue), p_commission => array_agg(i.commission))
    FROM unnest(o_ord) AS w(ord)
    JOIN unnest(p_program, p_sale_date, p_partner, p_currency, p_count_sales, p_count_customers, p_count_revenue,
        p_count_commission) WITH ORDINALITY AS i(program_id, sale_date, partner_id, currency, sales, customers, revenue,
            commission, ord) ON i.ord = w.ord;
    PERFORM attribution_convert(o_buyer, o_date);
    PERFORM leads_convert(o_buyer);
    IF o_click IS NOT NULL THEN
        PERFORM clicks_convert(o_click);
    END IF;
    RETURN QUERY SELECT w.ord, w.sale_id, c.id, c.amount_cents, c.reversed_amount_cents, c.currency, c.status
        FROM unnest(o_ord, o_sale) AS w(ord, sale_id)
        LEFT JOIN unnest(c_sale, c_id, c_amount, c_rev, c_cur, c_status)
            AS c(sale_id, id, amount_cents, reversed_amount_cents, currency, status) ON c.sale_id = w.sale_id;
END $$;
