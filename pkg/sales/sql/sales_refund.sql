-- sales_refund writes the planned refunds (one array per input, position = ord, NULL for a value not
-- given), each in turn, and only while its sale is still at the row version the plan rested on (locked
-- meanwhile), and its commission too: what the refund does to the commission, as pkg/ledger decided it
-- (pkg/ledger's ledger_refund: reversed, or clawed back; p_commission NULL: the sale has none), then
-- the refund (p_refund_reason and p_processor_refund_id NULL when not given), its clawback if any
-- (ledger_clawback), the sale's refunded total and payment status; what the written refunds take back of
-- the counts (p_count_*: pkg/counting's decision, kept under the sale's program, date, partner and
-- currency) through pkg/events' performance_add. It returns per refund whether it was written and the
-- commission as it now stands at p_now; a refund whose sale or commission changed meanwhile writes
-- nothing, and the caller decides it again.
CREATE OR REPLACE FUNCTION sales_refund(p_sale bigint[], p_version text[], p_program bigint[], p_reason text[],
    p_refund_reason text[], p_amount bigint[], p_reversed_now bigint[], p_commission bigint[],
    p_commission_version text[], p_reversed bigint[], p_commission_status text[], p_clawback bigint[], p_total bigint[],
    p_payment_status text[], p_processor_refund_id text[], p_source text[], p_count_hour timestamptz[],
    p_count_partner bigint[], p_count_currency text[], p_count_revenue bigint[], p_count_commission bigint[],
    p_now timestamptz)
RETURNS TABLE (ord bigint, written boolean, commission_id bigint, commission_amount_cents bigint,
    commission_reversed_cents bigint, commission_currency text, commission_status text, commission_clawback_cents bigint)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
#variable_conflict use_column
DECLARE
    v_sale   bigint;
    v_refund bigint;
    counted  bigint[]; -- the ords written
BEGIN
    FOR i IN 1 .. cardinality(p_sale) LOOP
        ord := i;
        written := false;
        commission_id := NULL; commission_amount_cents := NULL; commission_reversed_cents := NULL;
        commission_currency := NULL; commission_status := NULL; commission_clawback_cents := NULL;
        SELECT s.id INTO v_sale FROM sales s WHERE s.id = p_sale[i] AND s.xmin::text = p_version[i] FOR UPDATE;
        IF v_sale IS NOT NULL THEN
            written := true;
            IF p_commission[i] IS NOT NULL THEN
                SELECT l.id, l.amount_cents, l.reversed_amount_cents, l.currency, l.status, l.clawback_cents
                INTO commission_id, commission_amount_cents, commission_reversed_cents, commission_currency,
                    commission_status, commission_clawback_cents
                FROM ledger_refund(p_commission => p_commission[i], p_version => p_commission_version[i],
                    p_reversed => p_reversed[i], p_status => p_commission_status[i], p_clawback => p_clawback[i],
                    p_now => p_now) l;
                written := FOUND;
            END IF;
        END IF;
        IF written THEN
            INSERT INTO refunds (sale_id, program_id, reason, refund_reason, amount_cents, commission_reversed_cents,
                processor_refund_id, source)
            VALUES (v_sale, p_program[i], p_reason[i], p_refund_reason[i], p_amount[i], p_reversed_now[i],
                p_processor_refund_id[i], p_source[i])
            RETURNING id INTO v_refund;
            IF p_clawback[i] > 0 THEN
                PERFORM ledger_clawback(p_commission => p_commission[i], p_refund => v_refund, p_amount => p_clawback[i]);
            END IF;
            UPDATE sales SET refunded_amount_cents = p_total[i], payment_status = p_payment_status[i] WHERE id = v_sale;
            counted := counted || i::bigint;
        END IF;
        RETURN NEXT;
    END LOOP;
    IF counted IS NOT NULL THEN
        PERFORM performance_add(p_program => array_agg(p_program[k]), p_hour => array_agg(p_count_hour[k]),
            p_partner => array_agg(p_count_partner[k]), p_currency => array_agg(p_count_currency[k]), p_clicks => NULL,
            p_bot_clicks => NULL, p_leads => NULL, p_provisional_leads => NULL, p_sales => NULL, p_customers => NULL,
            p_revenue => array_agg(p_count_revenue[k]), p_commission => array_agg(p_count_commission[k]))
        FROM unnest(counted) AS k;
    END IF;
END $$;
