-- webhooks_lead_data is each lead as the events list shows it (LeadEvent), with is_test.
CREATE OR REPLACE FUNCTION webhooks_lead_data(p_ids bigint[])
RETURNS TABLE (id bigint, program_id bigint, is_test boolean, data jsonb)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY SELECT l.id, l.program_id, l.is_test, jsonb_build_object('id', l.id, 'event_type', 'lead',
        'timestamp', l.lead_timestamp, 'click_id', l.click_id, 'session_id', l.session_id, 'page_url', l.page_url,
        'customer_key', l.customer_key, 'converted', l.converted, 'createdAt', l.created_at, 'is_test', l.is_test)
    FROM leads l WHERE l.id = ANY (p_ids);
END $$;
