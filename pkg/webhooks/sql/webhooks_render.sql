-- webhooks_render fills in the data of the events p_events that have none yet, and returns every one's
-- data: the resource as the API shows it when a worker first picks the event up, with what only the event's
-- moment knew (a commission's status then, read by ledger_status at that instant, and the one before; a
-- payout's status then; the refund of a sale.refunded). Replicas rendering one event at once write it
-- once: the second update finds data set and leaves it, and both answer the stored data, so every
-- attempt to every endpoint carries the same body. A resource gone is shown by its id alone.
-- enable_seqscan off: a set-returning function counts as a thousand rows to the planner, which then
-- read the whole outbox to join a few events (a backlog drained at a third of the speed).
CREATE OR REPLACE FUNCTION webhooks_render(p_events bigint[])
RETURNS TABLE (id bigint, data jsonb)
LANGUAGE plpgsql SET enable_seqscan = off AS $$
#variable_conflict use_column
DECLARE
    types text[]; -- the types to render: only their statements run
BEGIN
    SELECT array_agg(DISTINCT e.type) INTO types FROM webhook_events e WHERE e.id = ANY (p_events) AND e.data IS NULL;
    IF types IS NULL THEN
        RETURN QUERY SELECT ev.id, ev.data FROM webhook_events ev WHERE ev.id = ANY (p_events);
        RETURN;
    END IF;
    IF 'lead.created' = ANY (types) THEN
    UPDATE webhook_events ev SET data = d.data
    FROM webhooks_lead_data(ARRAY(SELECT e.resource_id FROM webhook_events e
        WHERE e.id = ANY (p_events) AND e.type = 'lead.created' AND e.data IS NULL)) d
    WHERE ev.id = ANY (p_events) AND ev.type = 'lead.created' AND ev.data IS NULL AND d.id = ev.resource_id;
    END IF;

    IF types && ARRAY['sale.created', 'sale.refunded'] THEN
    UPDATE webhook_events ev SET data = d.data || CASE WHEN ev.type = 'sale.refunded' THEN jsonb_build_object('refund', (
            SELECT jsonb_build_object('id', r.id, 'amount_cents', r.amount_cents, 'reason', r.reason,
                'refund_reason', r.refund_reason, 'commission_reversed_cents', r.commission_reversed_cents, 'created_at', r.created_at)
            FROM refunds r WHERE r.id = ev.refund_id)) ELSE '{}'::jsonb END
    FROM webhooks_sale_data(ARRAY(SELECT e.resource_id FROM webhook_events e
        WHERE e.id = ANY (p_events) AND e.type IN ('sale.created', 'sale.refunded') AND e.data IS NULL)) d
    WHERE ev.id = ANY (p_events) AND ev.type IN ('sale.created', 'sale.refunded') AND ev.data IS NULL AND d.id = ev.resource_id;
    END IF;

    IF types && ARRAY['commission.created', 'commission.updated'] THEN
    UPDATE webhook_events ev SET data = d.data
        || jsonb_build_object('status', ledger_status(ev.status, c.available_on, p.commission_approval, ev.occurred_at))
        || CASE WHEN ev.type = 'commission.updated' THEN jsonb_build_object('previous_status', ev.previous_status) ELSE '{}'::jsonb END
    FROM webhooks_commission_data(ARRAY(SELECT e.resource_id FROM webhook_events e
            WHERE e.id = ANY (p_events) AND e.type IN ('commission.created', 'commission.updated') AND e.data IS NULL)) d,
        commissions c, programs p
    WHERE ev.id = ANY (p_events) AND ev.type IN ('commission.created', 'commission.updated') AND ev.data IS NULL
        AND d.id = ev.resource_id AND c.id = ev.resource_id AND p.id = c.program_id;
    END IF;

    IF types && ARRAY['payout.created', 'payout.paid', 'payout.failed'] THEN
    UPDATE webhook_events ev SET data = d.data || jsonb_build_object('status', ev.status)
    FROM webhooks_payout_data(ARRAY(SELECT e.resource_id FROM webhook_events e
        WHERE e.id = ANY (p_events) AND e.type LIKE 'payout.%' AND e.data IS NULL)) d
    WHERE ev.id = ANY (p_events) AND ev.type LIKE 'payout.%' AND ev.data IS NULL AND d.id = ev.resource_id;
    END IF;

    IF types && ARRAY['partner.created', 'partner.updated'] THEN
    UPDATE webhook_events ev SET data = d.data
    FROM webhooks_partner_data(ARRAY(SELECT e.resource_id FROM webhook_events e
        WHERE e.id = ANY (p_events) AND e.type LIKE 'partner.%' AND e.data IS NULL)) d
    WHERE ev.id = ANY (p_events) AND ev.type LIKE 'partner.%' AND ev.data IS NULL AND d.id = ev.resource_id;
    END IF;

    IF 'link.updated' = ANY (types) THEN
    UPDATE webhook_events ev SET data = d.data
    FROM webhooks_link_data(ARRAY(SELECT e.resource_id FROM webhook_events e
        WHERE e.id = ANY (p_events) AND e.type = 'link.updated' AND e.data IS NULL)) d
    WHERE ev.id = ANY (p_events) AND ev.type = 'link.updated' AND ev.data IS NULL AND d.id = ev.resource_id;
    END IF;

    UPDATE webhook_events ev SET data = jsonb_build_object('id', ev.resource_id, 'is_test', ev.is_test)
    WHERE ev.id = ANY (p_events) AND ev.data IS NULL;

    RETURN QUERY SELECT ev.id, ev.data FROM webhook_events ev WHERE ev.id = ANY (p_events);
END $$;
