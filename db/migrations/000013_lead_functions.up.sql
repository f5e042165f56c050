-- The lead's statements as PL/pgSQL functions, like the sale's (000010): a lead was a transaction of ten
-- statements, each sent as text and planned on every call, holding its customer locked across ten round
-- trips (PostgreSQL spent 2-3 ms of CPU per lead, most of it planning). It is now the sale's recipe: one
-- read, the rules in Go (pkg/leads), one write that commits by itself, guarded by the customer's row
-- version; plans are kept per connection.

-- owner: pkg/leads
-- leads_state reads, for each lead (parallel arrays; ord is the position), what the rules need: the click
-- behind click_id, the program (the click's when click_decides and the click exists, else the one given)
-- and that program's customer, by customer_key when one is given, else the first made from the click,
-- with its row version. Nothing locked.
CREATE FUNCTION leads_state(p_click_id text[], p_program bigint[], p_customer_key text[], p_click_decides boolean[])
RETURNS TABLE (ord bigint, click_ref bigint, click_id text, click_program_id bigint, click_partner_id bigint,
    click_test boolean, program_id bigint, lead_auth text, allowed_origins text[], owner_suspended boolean,
    customer_id bigint, customer_version text, customer_key text, customer_click_ref bigint, customer_click_id text,
    customer_partner_id bigint, customer_status text, customer_test boolean)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT i.ord, k.id, k.click_id, k.program_id, k.partner_id, k.is_test,
        p.id, p.lead_auth, p.allowed_origins,
        COALESCE(EXISTS (SELECT 1 FROM workspace_members sm JOIN accounts sa ON sa.id = sm.account_id
            WHERE sm.workspace_id = p.workspace_id AND sm.role = 'owner' AND sa.suspended_at IS NOT NULL), false),
        cu.id, cu.version, cu.customer_key, cu.click_ref, cc.click_id, cu.partner_id, cu.status, cu.is_test
    FROM unnest(p_click_id, p_program, p_customer_key, p_click_decides) WITH ORDINALITY
        AS i(click_id, program_id, customer_key, click_decides, ord)
    LEFT JOIN clicks k ON k.click_id = NULLIF(i.click_id, '')
    CROSS JOIN LATERAL (SELECT CASE WHEN i.click_decides AND k.id IS NOT NULL THEN k.program_id ELSE i.program_id END AS id) v
    LEFT JOIN programs p ON p.id = v.id
    LEFT JOIN LATERAL (
        SELECT c.id, c.xmin::text AS version, c.customer_key, c.click_ref, c.partner_id, c.status, c.is_test
        FROM customers c WHERE i.customer_key <> '' AND c.program_id = v.id AND c.customer_key = i.customer_key
        UNION ALL
        (SELECT c.id, c.xmin::text, c.customer_key, c.click_ref, c.partner_id, c.status, c.is_test
        FROM customers c WHERE i.customer_key = '' AND k.id IS NOT NULL AND c.program_id = v.id AND c.click_ref = k.id
        ORDER BY c.id LIMIT 1)
    ) cu ON true
    LEFT JOIN clicks cc ON cc.id = cu.click_ref
    ORDER BY i.ord;
END $$;

-- owner: pkg/attribution
-- attribution_create_lead makes a customer of the click's program at status lead (signed up now),
-- attributed to the click's partner (and its partner-program relationship when there is one), with the key
-- bound when given, and returns its id; NULL when a concurrent request bound the key first (the caller
-- decides again).
CREATE FUNCTION attribution_create_lead(p_program bigint, p_key text, p_click_ref bigint, p_partner bigint,
    p_email text, p_test boolean) RETURNS bigint
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    v_id bigint;
BEGIN
    INSERT INTO customers (program_id, customer_key, click_ref, partner_id, partner_program_id, email, is_test,
        status, signed_up_at)
    SELECT p_program, NULLIF(p_key, ''), p_click_ref, p_partner,
        (SELECT pp.id FROM partner_programs pp WHERE pp.partner_id = p_partner AND pp.program_id = p_program),
        NULLIF(p_email, ''), p_test, 'lead', now()
    ON CONFLICT (program_id, customer_key) DO NOTHING
    RETURNING id INTO v_id;
    RETURN v_id;
END $$;

-- owner: pkg/attribution
-- attribution_mark_lead moves the customer to lead, keeping its email unless one is given.
CREATE FUNCTION attribution_mark_lead(p_customer bigint, p_email text) RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
BEGIN
    UPDATE customers SET status = 'lead', signed_up_at = now(), email = COALESCE(NULLIF(p_email, ''), email),
        updated_at = now() WHERE id = p_customer;
END $$;

-- owner: pkg/leads
-- leads_write writes the planned leads (parallel arrays, position = ord), each in turn: kind 'provisional'
-- through leads_record_provisional, 'settle' through leads_settle (0 and '' stand for none). It returns
-- per lead whether it was written, and the settled lead's id.
CREATE FUNCTION leads_write(p_kind text[], p_customer bigint[], p_version text[], p_program bigint[], p_click_ref bigint[],
    p_click_id text[], p_partner bigint[], p_customer_key text[], p_email text[], p_source text[], p_test boolean[])
RETURNS TABLE (ord bigint, written boolean, lead_id bigint)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
BEGIN
    FOR i IN 1 .. cardinality(p_kind) LOOP
        ord := i;
        lead_id := NULL;
        IF p_kind[i] = 'provisional' THEN
            PERFORM leads_record_provisional(p_program[i], p_click_ref[i], p_click_id[i], p_customer_key[i], p_email[i],
                p_source[i], p_test[i]);
        ELSE
            lead_id := leads_settle(p_customer[i], p_version[i], p_program[i], NULLIF(p_click_ref[i], 0), p_click_id[i],
                p_partner[i], p_customer_key[i], p_email[i], p_source[i], p_test[i]);
        END IF;
        written := p_kind[i] = 'provisional' OR lead_id IS NOT NULL;
        RETURN NEXT;
    END LOOP;
END $$;

-- owner: pkg/leads
-- leads_settle records a settled lead for the customer p_customer at row version p_version, or, when
-- p_customer is 0, for a customer made now from the click p_click_ref (partner p_partner, key
-- p_customer_key) at status lead: the customer moves to lead, the provisional lead of its click becomes
-- the settled one, else a new one is made, and its click is marked converted, through their owners'
-- functions. It returns the
-- lead's id, or NULL, having written nothing, when the customer changed since it was read or the key was
-- bound meanwhile: the caller decides again on what is stored now.
CREATE FUNCTION leads_settle(p_customer bigint, p_version text, p_program bigint, p_click_ref bigint, p_click_id text,
    p_partner bigint, p_customer_key text, p_email text, p_source text, p_test boolean) RETURNS bigint
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    v_customer bigint := p_customer;
    v_id bigint;
BEGIN
    IF v_customer = 0 THEN
        v_customer := attribution_create_lead(p_program, p_customer_key, p_click_ref, p_partner, p_email, p_test);
        IF v_customer IS NULL THEN
            RETURN NULL;
        END IF;
    ELSIF cardinality(attribution_lock_unchanged(ARRAY[p_customer], ARRAY[p_version])) = 0 THEN
        RETURN NULL;
    ELSE
        PERFORM attribution_mark_lead(v_customer, p_email);
    END IF;
    -- Asked first: an update of leads runs the lead-count trigger (building its transition tables) even when it
    -- changes nothing, and a provisional lead is the exception.
    IF p_click_ref IS NOT NULL AND EXISTS (SELECT 1 FROM leads WHERE click_ref = p_click_ref AND status = 'provisional') THEN
        UPDATE leads SET status = 'settled', settled_at = now(), customer_id = v_customer,
            customer_key = NULLIF(p_customer_key, ''), email = COALESCE(NULLIF(p_email, ''), email), source = p_source,
            is_test = is_test OR p_test
        WHERE click_ref = p_click_ref AND status = 'provisional' RETURNING id INTO v_id;
    END IF;
    IF v_id IS NULL THEN
        INSERT INTO leads (program_id, customer_id, click_ref, click_id, customer_key, email, status, source, settled_at, is_test)
        VALUES (p_program, v_customer, p_click_ref, NULLIF(p_click_id, ''), NULLIF(p_customer_key, ''), NULLIF(p_email, ''),
            'settled', p_source, now(), p_test)
        RETURNING id INTO v_id;
    END IF;
    IF p_click_ref IS NOT NULL THEN
        PERFORM clicks_convert(ARRAY[p_click_ref]);
    END IF;
    RETURN v_id;
END $$;

-- owner: pkg/leads
-- leads_record_provisional stores a browser-mode lead against its click unless the click already has a
-- lead (a repeat, or a lead after settlement, records nothing).
CREATE FUNCTION leads_record_provisional(p_program bigint, p_click_ref bigint, p_click_id text, p_customer_key text,
    p_email text, p_source text, p_test boolean) RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
BEGIN
    INSERT INTO leads (program_id, click_ref, click_id, customer_key, email, status, source, is_test)
    SELECT p_program, p_click_ref, p_click_id, NULLIF(p_customer_key, ''), NULLIF(p_email, ''), 'provisional', p_source, p_test
    WHERE NOT EXISTS (SELECT 1 FROM leads WHERE click_ref = p_click_ref)
    ON CONFLICT (click_ref) WHERE status = 'provisional' DO NOTHING;
END $$;
