-- The reftrack schema: tables, sequences, indexes, constraints, views and partitioning, and the three
-- functions a table's definition uses (clicks_month, clicks_make_id, clicks_ref_month). Nothing else:
-- every other database function lives beside the package that owns it (pkg/<owner>/sql/<name>.sql), and
-- the triggers that call them are their owners' too (pkg/events/sql.Triggers, pkg/webhooks/sql.Triggers);
-- `reftrackd migrate up` applies both after this file (db.ApplyFunctions).
--
-- This one file is the schema until the first release (docs/deploy.md): the project has had no release,
-- so no database keeps an older schema, and a change before then is made here (a database made by an
-- earlier version of this file is recreated). From the first release on, every change is a new migration.
--
-- Rules the interface states are enforced here too, so that no code path can break them: a sale's
-- transaction_id (processor_event_id) is unique per program, customer_key is unique per program,
-- short_link is unique, and references are foreign keys, except where said otherwise below (a click's
-- references, the webhook outbox, the counts' deltas, the audit log).

----------------------------------------------------------------------------------------------------------
-- Accounts, workspaces and signing in
----------------------------------------------------------------------------------------------------------

-- Accounts sign in through OpenID Connect (or are made by `reftrackd seed`).
CREATE TABLE accounts (
    id            bigserial PRIMARY KEY,
    email         text        NOT NULL CHECK (email <> ''),
    name          text        NOT NULL DEFAULT '',
    oidc_issuer   text,
    oidc_subject  text,
    suspended_at  timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    CHECK ((oidc_issuer IS NULL) = (oidc_subject IS NULL))
);
CREATE UNIQUE INDEX accounts_email_key ON accounts (lower(email));
CREATE UNIQUE INDEX accounts_oidc_key ON accounts (oidc_issuer, oidc_subject) WHERE oidc_subject IS NOT NULL;

-- A workspace is the interface's "advertiser": it owns programs and partners.
CREATE TABLE workspaces (
    id          bigserial PRIMARY KEY,
    name        text        NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- Members with a role. An invitation by email has no account until that person logs in.
CREATE TABLE workspace_members (
    id            bigserial PRIMARY KEY,
    workspace_id  bigint      NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    account_id    bigint      REFERENCES accounts (id) ON DELETE CASCADE,
    email         text        NOT NULL CHECK (email <> ''),
    role          text        NOT NULL CHECK (role IN ('owner', 'admin', 'analyst', 'billing')),
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX workspace_members_email_key ON workspace_members (workspace_id, lower(email));
CREATE UNIQUE INDEX workspace_members_account_key ON workspace_members (workspace_id, account_id) WHERE account_id IS NOT NULL;
CREATE INDEX workspace_members_account_idx ON workspace_members (account_id);

-- A person who signs in to the partner portal. Their verified email links them to every partner record
-- with that email, in any workspace.
CREATE TABLE partner_people (
    id              bigserial   PRIMARY KEY,
    email           text        NOT NULL CHECK (email <> ''),
    name            text        NOT NULL DEFAULT '',
    oidc_issuer     text        NOT NULL,
    oidc_subject    text        NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    last_signed_in  timestamptz,
    UNIQUE (oidc_issuer, oidc_subject)
);
CREATE UNIQUE INDEX partner_people_email_key ON partner_people (lower(email));

-- Login sessions, keyed by state; pending for 5 minutes. The CLI, the dashboard and the partner portal
-- sign in through them (and the issuer's one redirect URI). The CLI's login token is minted at the first
-- poll after sign-in, so no plaintext token is ever stored. A dashboard or portal session is bound to the
-- browser that started it (browser_hash: the hash of a secret kept in that browser's short-lived
-- cookie), so a login link sent to someone else cannot sign their browser in to the sender's account. A
-- portal sign-in ends signed in as a partner person rather than an account, and returns to return_to.
CREATE TABLE login_sessions (
    id                 bigserial PRIMARY KEY,
    state              text        NOT NULL UNIQUE,
    status             text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'signed_in', 'consumed')),
    account_id         bigint      REFERENCES accounts (id) ON DELETE CASCADE,
    code_verifier      text,
    nonce              text,
    created_at         timestamptz NOT NULL DEFAULT now(),
    expires_at         timestamptz NOT NULL,
    signed_in_at       timestamptz,
    consumed_at        timestamptz,
    purpose            text        NOT NULL DEFAULT 'cli' CHECK (purpose IN ('cli', 'dashboard', 'partner')),
    browser_hash       bytea       CHECK (browser_hash IS NULL OR length(browser_hash) = 32),
    partner_person_id  bigint      REFERENCES partner_people (id) ON DELETE CASCADE,
    return_to          text,
    CONSTRAINT login_sessions_check CHECK (status = 'pending' OR account_id IS NOT NULL OR partner_person_id IS NOT NULL),
    CONSTRAINT login_sessions_dashboard_bound CHECK (purpose = 'cli' OR browser_hash IS NOT NULL)
);

-- Account login tokens (CLI Bearer and dashboard session), stored as SHA-256 hashes.
CREATE TABLE login_tokens (
    id            bigserial PRIMARY KEY,
    account_id    bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    kind          text        NOT NULL CHECK (kind IN ('cli', 'dashboard', 'seed')),
    token_hash    bytea       NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    last4         text        NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL,
    revoked_at    timestamptz,
    last_used_at  timestamptz
);
CREATE INDEX login_tokens_account_idx ON login_tokens (account_id);

-- A partner portal session (cookie), stored as the token's SHA-256.
CREATE TABLE partner_sessions (
    id          bigserial   PRIMARY KEY,
    person_id   bigint      NOT NULL REFERENCES partner_people (id) ON DELETE CASCADE,
    token_hash  bytea       NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    revoked_at  timestamptz
);

----------------------------------------------------------------------------------------------------------
-- Programs, their keys, partners and links
----------------------------------------------------------------------------------------------------------

CREATE TABLE programs (
    id                          bigserial PRIMARY KEY,
    workspace_id                bigint        NOT NULL REFERENCES workspaces (id),
    name                        text          NOT NULL CHECK (name <> ''),
    domain                      text          NOT NULL CHECK (domain <> ''),
    slug                        text          NOT NULL UNIQUE,
    status                      text          NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused')),
    lead_auth                   text          NOT NULL DEFAULT 'server_required'
                                              CHECK (lead_auth IN ('server_required', 'browser_allowed')),
    cookie_window_days          integer       NOT NULL DEFAULT 60 CHECK (cookie_window_days > 0),
    attribution_window_days     integer       NOT NULL DEFAULT 60 CHECK (attribution_window_days > 0),
    commission_type             text          NOT NULL
                                              CHECK (commission_type IN ('percent', 'fixed', 'recurring_percent', 'recurring_fixed')),
    -- Percent for percent types, major currency units for fixed types; decimal, never a float.
    commission_rate             numeric(14,4) NOT NULL CHECK (commission_rate > 0),
    -- Recurring types: months a customer's payments keep paying; NULL = lifetime.
    commission_duration_months  integer       CHECK (commission_duration_months > 0),
    allowed_origins             text[]        NOT NULL DEFAULT '{}',
    dns_verified_at             timestamptz,
    created_at                  timestamptz   NOT NULL DEFAULT now(),
    updated_at                  timestamptz   NOT NULL DEFAULT now(),
    -- Domain verification: the program proves its domain with a TXT record `_reftrack.<domain>` whose
    -- value names this token (programs.DNSRecordOf). dns_checked_at spaces the lookups out: status
    -- requests look the record up at most once a minute per program.
    dns_token                   text          NOT NULL DEFAULT replace(gen_random_uuid()::text, '-', ''),
    dns_checked_at              timestamptz,
    -- The ledger's terms (pkg/ledger): a commission's hold, its approval, and the smallest payout.
    hold_days                   integer       NOT NULL DEFAULT 30 CHECK (hold_days BETWEEN 0 AND 365),
    commission_approval         text          NOT NULL DEFAULT 'auto' CHECK (commission_approval IN ('auto', 'manual')),
    payout_minimum_cents        bigint        NOT NULL DEFAULT 0 CHECK (payout_minimum_cents BETWEEN 0 AND 1000000000),
    -- How the program takes partners: by invitation only, or also by application on its public page
    -- (/p/{slug}); applications wait for a member's approval, or are approved at once.
    enrollment                  text          NOT NULL DEFAULT 'invite_only' CHECK (enrollment IN ('invite_only', 'open')),
    partner_approval            text          NOT NULL DEFAULT 'manual' CHECK (partner_approval IN ('manual', 'auto')),
    -- Whether an approved partner may make their own link codes in the portal.
    partner_link_codes          boolean       NOT NULL DEFAULT true
);
CREATE INDEX programs_workspace_idx ON programs (workspace_id);

-- Program API keys: only a SHA-256 hash is stored. A regenerated key is revoked (it then matches no
-- program); a key marked for rotation keeps working until rotate_by.
CREATE TABLE api_keys (
    id                  bigserial PRIMARY KEY,
    program_id          bigint      NOT NULL REFERENCES programs (id) ON DELETE CASCADE,
    key_hash            bytea       NOT NULL UNIQUE CHECK (length(key_hash) = 32),
    last4               text        NOT NULL,
    created_at          timestamptz NOT NULL DEFAULT now(),
    created_by          bigint      REFERENCES accounts (id),
    rotation_marked_at  timestamptz,
    rotate_by           timestamptz,
    revoked_at          timestamptz,
    last_used_at        timestamptz,
    CHECK ((rotation_marked_at IS NULL) = (rotate_by IS NULL))
);
CREATE UNIQUE INDEX api_keys_one_active_per_program ON api_keys (program_id) WHERE revoked_at IS NULL;

-- Partners belong to a workspace and join its programs through partner_programs.
CREATE TABLE partners (
    id                 bigserial PRIMARY KEY,
    workspace_id       bigint      NOT NULL REFERENCES workspaces (id),
    name               text        NOT NULL,
    email              text        NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    -- The partner that `reftrack test --chain` records its synthetic chain against: partner counts and
    -- the readiness payout gate leave it out, and it is never paid.
    synthetic          boolean     NOT NULL DEFAULT false,
    -- Payout details the partner gives in the portal, sealed (AES-256-GCM) with a key derived from
    -- WEBHOOK_SECRETS_KEY: a copy of the database alone reads none. payout_method says which kind.
    payout_method      text        CHECK (payout_method IN ('paypal', 'bank_transfer')),
    payout_details     bytea,
    payout_updated_at  timestamptz,
    CONSTRAINT partners_payout_details_check CHECK ((payout_method IS NULL) = (payout_details IS NULL))
);
CREATE UNIQUE INDEX partners_email_key ON partners (workspace_id, lower(email));
-- A partner person's records, in every workspace, by their email.
CREATE INDEX partners_email_idx ON partners (lower(email));

-- A partner's enrollment in a program: invited -> approved; pending (applied) -> approved | rejected;
-- approved -> banned; removed: an invitation withdrawn. 'active', what a brand's adding a partner writes
-- (the default), reads as approved (pkg/programs.StatusColumn).
CREATE TABLE partner_programs (
    id                   bigserial PRIMARY KEY,
    partner_id           bigint      NOT NULL REFERENCES partners (id),
    program_id           bigint      NOT NULL REFERENCES programs (id),
    status               text        NOT NULL DEFAULT 'active'
                                     CHECK (status IN ('active', 'removed', 'invited', 'pending', 'approved', 'rejected', 'banned')),
    created_at           timestamptz NOT NULL DEFAULT now(),
    status_reason        text,
    status_changed_at    timestamptz,
    application_message  text,
    application_website  text,
    UNIQUE (partner_id, program_id)
);
CREATE INDEX partner_programs_program_idx ON partner_programs (program_id);

-- An invitation by email to one program. Its link carries a token kept only as a hash; it is valid 30
-- days from its last sending; resending makes a new token (the old link stops working). 'sent' past
-- expires_at reads as expired.
CREATE TABLE partner_invitations (
    id            bigserial   PRIMARY KEY,
    program_id    bigint      NOT NULL REFERENCES programs (id),
    partner_id    bigint      NOT NULL REFERENCES partners (id),
    email         text        NOT NULL,
    message       text,
    token_hash    bytea       NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    status        text        NOT NULL DEFAULT 'sent' CHECK (status IN ('sent', 'accepted', 'canceled')),
    sent_count    integer     NOT NULL DEFAULT 1,
    last_sent_at  timestamptz NOT NULL,
    expires_at    timestamptz NOT NULL,
    invited_by    bigint      REFERENCES accounts (id),
    accepted_at   timestamptz,
    canceled_at   timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now()
);
-- At most one open invitation per partner and program.
CREATE UNIQUE INDEX partner_invitations_open_key ON partner_invitations (program_id, partner_id) WHERE status = 'sent';
CREATE INDEX partner_invitations_program_idx ON partner_invitations (program_id, id DESC);

-- A link with no partner or program can exist (it answers "Invalid referral link configuration").
CREATE TABLE referral_links (
    id          bigserial PRIMARY KEY,
    short_link  text        NOT NULL UNIQUE CHECK (short_link <> ''),
    partner_id  bigint      REFERENCES partners (id),
    program_id  bigint      REFERENCES programs (id),
    enabled     boolean     NOT NULL DEFAULT true,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX referral_links_program_idx ON referral_links (program_id);
CREATE INDEX referral_links_partner_idx ON referral_links (partner_id);

----------------------------------------------------------------------------------------------------------
-- Clicks, partitioned by month
----------------------------------------------------------------------------------------------------------

-- History that stays fast: clicks are partitioned by month, so a year of clicks is a dozen tables whose
-- indexes stay the size of a month, and old months are dropped whole (clicks_expire), never deleted row
-- by row.
--
-- click_month is the partition key, and every click's id says its month: the click_id the server hands
-- out starts with it (YYMM, then 22 characters of 128 random bits: pkg/clicks.NewClickID), and the row id
-- carries it in its high bits (clicks_make_id). So a lookup by click_id or by id names its partition and
-- stays one index probe (partition pruning at execution), and UNIQUE (click_id, click_month) keeps
-- click_id unique across partitions (clicks_click_id_month refuses a click_id without its month).
--
-- Retention drops months, but never what attribution needs: clicks_expire copies the clicks a customer,
-- lead or sale points at into clicks_kept before it drops their month, and the lookups fall back to it,
-- so a customer's click (and a recurring commission's partner) outlives its month. The click_ref columns
-- of customers, leads and sales therefore have no foreign keys: a reference may point at clicks or at
-- clicks_kept.

-- clicks_month is the month a click_id carries (its first four characters, YYMM), NULL for one without.
CREATE FUNCTION clicks_month(p_click_id text) RETURNS date LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN length(p_click_id) = 26 AND substr(p_click_id, 1, 4) ~ '^[0-9][0-9](0[1-9]|1[0-2])$'
        THEN make_date(2000 + substr(p_click_id, 1, 2)::int, substr(p_click_id, 3, 2)::int, 1) END
$$;

-- clicks_make_id is the row id of the p_seq-th click in p_month: the month (counted from January 2000)
-- in the high bits, above 40 bits of sequence.
CREATE FUNCTION clicks_make_id(p_month date, p_seq bigint) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT (((extract(year FROM p_month)::bigint - 2000) * 12 + extract(month FROM p_month)::bigint - 1) << 40) | p_seq
$$;

-- clicks_ref_month is the month a row id carries (clicks_make_id's inverse).
CREATE FUNCTION clicks_ref_month(p_id bigint) RETURNS date LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT make_date(2000 + ((p_id >> 40) / 12)::int, ((p_id >> 40) % 12)::int + 1, 1)
$$;

CREATE SEQUENCE clicks_id_seq;

CREATE TABLE clicks (
    id                 bigint      NOT NULL DEFAULT clicks_make_id(date_trunc('month', now() AT TIME ZONE 'UTC')::date, nextval('clicks_id_seq')),
    click_month        date        NOT NULL DEFAULT date_trunc('month', now() AT TIME ZONE 'UTC')::date,
    click_id           text        NOT NULL,
    program_id         bigint      NOT NULL REFERENCES programs (id),
    link_id            bigint      NOT NULL REFERENCES referral_links (id),
    partner_id         bigint      NOT NULL REFERENCES partners (id),
    click_timestamp    timestamptz NOT NULL DEFAULT now(),
    affiliate_url      text        NOT NULL,
    session_id         text,
    page_url           text,
    page_title         text,
    referrer_url       text,
    geo_country        text,
    geo_region         text,
    geo_city           text,
    device_type        text,
    device_os          text,
    browser_name       text,
    user_agent         text,
    ip                 inet,
    -- SHA-256 of client IP + User-Agent: a repeat visit within an hour returns the same click.
    visitor_hash       bytea,
    screen_resolution  text,
    viewport_size      text,
    language           text,
    timezone           text,
    converted          boolean     NOT NULL DEFAULT false,
    is_test            boolean     NOT NULL DEFAULT false,
    is_bot             boolean     NOT NULL DEFAULT false,
    created_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (id, click_month),
    UNIQUE (click_id, click_month),
    CONSTRAINT clicks_id_month CHECK (clicks_ref_month(id) = click_month),
    -- A click_id without a month (NULL) fails too: COALESCE, not a second call, so the month is read once.
    CONSTRAINT clicks_click_id_month CHECK (COALESCE(clicks_month(click_id) = click_month, false))
) PARTITION BY RANGE (click_month);
ALTER SEQUENCE clicks_id_seq OWNED BY clicks.id;

-- Events list and counts: real clicks of a program, newest first; the dashboard's test-data view lists
-- test clicks the same way.
CREATE INDEX clicks_program_events_idx ON clicks (program_id, click_timestamp DESC, id DESC)
    WHERE NOT is_test AND NOT is_bot;
CREATE INDEX clicks_program_test_events_idx ON clicks (program_id, click_timestamp DESC, id DESC)
    WHERE is_test AND NOT is_bot;
-- Repeat-visitor lookup on the click hot path.
CREATE INDEX clicks_visitor_idx ON clicks (link_id, visitor_hash, click_timestamp DESC)
    WHERE visitor_hash IS NOT NULL;

-- The current month and three ahead, so that a new database takes clicks at once. From here on the
-- server makes the months ahead (clicks_prepare, pkg/clicks/sql), named the same: clicks_YYYY_MM.
DO $$
DECLARE
    m date;
BEGIN
    FOR i IN 0 .. 3 LOOP
        m := (date_trunc('month', now() AT TIME ZONE 'UTC') + make_interval(months => i))::date;
        EXECUTE format('CREATE TABLE %I PARTITION OF clicks FOR VALUES FROM (%L) TO (%L)',
            'clicks_' || to_char(m, 'YYYY_MM'), m, (m + interval '1 month')::date);
    END LOOP;
END $$;

-- Clicks kept past their month's retention because a customer, lead or sale points at them.
CREATE TABLE clicks_kept (LIKE clicks INCLUDING DEFAULTS);
ALTER TABLE clicks_kept ADD PRIMARY KEY (id), ADD UNIQUE (click_id);

----------------------------------------------------------------------------------------------------------
-- Customers, leads, sales and refunds
----------------------------------------------------------------------------------------------------------

-- A customer exists from a lead or a sale on. customer_key is bound only by a server-mode lead, a sale or
-- a processor webhook (never by a browser), and is unique per program.
CREATE TABLE customers (
    id                  bigserial PRIMARY KEY,
    program_id          bigint      NOT NULL REFERENCES programs (id),
    customer_key        text        CHECK (customer_key <> ''),
    click_ref           bigint,     -- clicks or clicks_kept (no foreign key, above)
    partner_id          bigint      REFERENCES partners (id),
    partner_program_id  bigint      REFERENCES partner_programs (id),
    status              text        NOT NULL DEFAULT 'visitor' CHECK (status IN ('visitor', 'lead', 'converted')),
    email               text,
    signed_up_at        timestamptz,
    converted_at        timestamptz,
    is_test             boolean     NOT NULL DEFAULT false,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    UNIQUE (program_id, customer_key)
);
CREATE INDEX customers_click_idx ON customers (click_ref);

CREATE TABLE leads (
    id              bigserial PRIMARY KEY,
    program_id      bigint      NOT NULL REFERENCES programs (id),
    customer_id     bigint      REFERENCES customers (id),
    click_ref       bigint,     -- clicks or clicks_kept (no foreign key, above)
    click_id        text,
    -- As sent; on a provisional lead it binds nothing.
    customer_key    text,
    email           text,
    session_id      text,
    page_url        text,
    status          text        NOT NULL CHECK (status IN ('provisional', 'settled')),
    source          text        NOT NULL CHECK (source IN ('browser', 'server', 'webhook', 'cli_test')),
    settled_at      timestamptz,
    converted       boolean     NOT NULL DEFAULT false,
    lead_timestamp  timestamptz NOT NULL DEFAULT now(),
    is_test         boolean     NOT NULL DEFAULT false,
    created_at      timestamptz NOT NULL DEFAULT now(),
    -- What the lead counts for, as pkg/counting decided when it was written (NULL: nothing, a test lead):
    -- settling a provisional lead takes back what it counted for before adding what it counts for now.
    counts_as       text        CHECK (counts_as IN ('lead', 'provisional')),
    CHECK ((status = 'settled') = (settled_at IS NOT NULL))
);
CREATE INDEX leads_program_events_idx ON leads (program_id, lead_timestamp DESC, id DESC) WHERE NOT is_test;
CREATE INDEX leads_program_test_events_idx ON leads (program_id, lead_timestamp DESC, id DESC) WHERE is_test;
CREATE INDEX leads_click_idx ON leads (click_ref);
-- A sale marks its customer's leads converted (leads_convert, by customer_id): without this index that
-- was a scan of every lead, 2.4 ms per sale at 40 000 leads and growing with the table.
CREATE INDEX leads_customer_idx ON leads (customer_id);
-- One settled lead per customer, and at most one provisional lead per click.
CREATE UNIQUE INDEX leads_one_settled_per_customer ON leads (customer_id) WHERE status = 'settled';
CREATE UNIQUE INDEX leads_one_provisional_per_click ON leads (click_ref) WHERE status = 'provisional';

CREATE TABLE sales (
    id                     bigserial PRIMARY KEY,
    program_id             bigint      NOT NULL REFERENCES programs (id),
    customer_id            bigint      NOT NULL REFERENCES customers (id),
    partner_id             bigint      NOT NULL REFERENCES partners (id),
    click_ref              bigint,     -- clicks or clicks_kept (no foreign key, above)
    click_id               text,
    -- The transaction_id: unique per program, not across programs: two brands may both send
    -- `order_1001`, and neither can block, or learn of, the other's sales.
    processor_event_id     text        NOT NULL CHECK (processor_event_id <> ''),
    amount_cents           bigint      NOT NULL CHECK (amount_cents > 0),
    currency               text        NOT NULL CHECK (currency IN ('USD', 'EUR', 'VND')),
    refunded_amount_cents  bigint      NOT NULL DEFAULT 0,
    sale_type              text        NOT NULL DEFAULT 'payment',
    payment_status         text        NOT NULL DEFAULT 'paid',
    is_recurring           boolean     NOT NULL DEFAULT false,
    provider               text,
    provider_payment_id    text        CHECK (char_length(provider_payment_id) BETWEEN 1 AND 255),
    livemode               boolean,
    event_name             text,
    subscription_id        text,
    subscription_interval  text,
    source                 text        NOT NULL CHECK (source IN ('api', 'webhook', 'cli_test')),
    sale_date              timestamptz NOT NULL,
    is_test                boolean     NOT NULL DEFAULT false,
    created_at             timestamptz NOT NULL DEFAULT now(),
    CHECK (refunded_amount_cents BETWEEN 0 AND amount_cents),
    CONSTRAINT sales_program_transaction_key UNIQUE (program_id, processor_event_id)
);
CREATE INDEX sales_program_events_idx ON sales (program_id, sale_date DESC, id DESC) WHERE NOT is_test;
CREATE INDEX sales_program_test_events_idx ON sales (program_id, sale_date DESC, id DESC) WHERE is_test;
-- A customer's first sale is one index probe.
CREATE INDEX sales_customer_date_idx ON sales (customer_id, sale_date);
CREATE INDEX sales_click_idx ON sales (click_ref);
-- Refund and dispute events name the payment (payment intent or charge), not our transaction id.
CREATE INDEX sales_provider_payment_idx ON sales (program_id, provider_payment_id) WHERE provider_payment_id IS NOT NULL;

CREATE TABLE refunds (
    id                         bigserial PRIMARY KEY,
    sale_id                    bigint      NOT NULL REFERENCES sales (id),
    program_id                 bigint      NOT NULL REFERENCES programs (id),
    reason                     text        NOT NULL CHECK (reason IN ('refund', 'chargeback')),
    refund_reason              text,
    amount_cents               bigint      NOT NULL CHECK (amount_cents > 0),
    commission_reversed_cents  bigint      NOT NULL DEFAULT 0 CHECK (commission_reversed_cents >= 0),
    -- A processor's refund or dispute id, so a redelivered webhook cannot refund twice. Per program, as
    -- transaction ids are: one Stripe account connected to two programs refunds each program's sale once.
    processor_refund_id        text,
    source                     text        NOT NULL CHECK (source IN ('api', 'webhook')),
    created_at                 timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT refunds_program_processor_refund_key UNIQUE (program_id, processor_refund_id)
);
CREATE INDEX refunds_sale_idx ON refunds (sale_id);

----------------------------------------------------------------------------------------------------------
-- The ledger: commissions, payouts and clawbacks (pkg/ledger)
----------------------------------------------------------------------------------------------------------

-- A payout pays one partner, in one currency, the approved commissions it holds less the clawbacks it
-- nets: amount_cents = gross_cents - clawback_cents.
CREATE TABLE payouts (
    id                  bigserial   PRIMARY KEY,
    program_id          bigint      NOT NULL REFERENCES programs (id),
    partner_id          bigint      NOT NULL REFERENCES partners (id),
    currency            text        NOT NULL CHECK (currency IN ('USD', 'EUR', 'VND')),
    gross_cents         bigint      NOT NULL CHECK (gross_cents > 0),
    clawback_cents      bigint      NOT NULL DEFAULT 0 CHECK (clawback_cents >= 0),
    amount_cents        bigint      NOT NULL CHECK (amount_cents > 0),
    commission_count    integer     NOT NULL CHECK (commission_count > 0),
    status              text        NOT NULL DEFAULT 'processing' CHECK (status IN ('processing', 'paid', 'failed')),
    external_reference  text        CHECK (length(external_reference) BETWEEN 1 AND 255),
    failure_reason      text        CHECK (length(failure_reason) BETWEEN 1 AND 500),
    created_at          timestamptz NOT NULL,
    paid_at             timestamptz,
    failed_at           timestamptz,
    CHECK (amount_cents = gross_cents - clawback_cents),
    CHECK ((status = 'paid') = (paid_at IS NOT NULL AND external_reference IS NOT NULL)),
    CHECK ((status = 'failed') = (failed_at IS NOT NULL AND failure_reason IS NOT NULL))
);
CREATE INDEX payouts_program_idx ON payouts (program_id, id DESC);
CREATE INDEX payouts_program_status_idx ON payouts (program_id, status, id DESC);

-- One commission per sale, written in the sale's transaction; then held, approved, paid out and clawed
-- back by the ledger's rules.
CREATE TABLE commissions (
    id                     bigserial PRIMARY KEY,
    sale_id                bigint      NOT NULL UNIQUE REFERENCES sales (id),
    program_id             bigint      NOT NULL REFERENCES programs (id),
    partner_id             bigint      NOT NULL REFERENCES partners (id),
    partner_program_id     bigint      NOT NULL REFERENCES partner_programs (id),
    amount_cents           bigint      NOT NULL CHECK (amount_cents >= 0),
    reversed_amount_cents  bigint      NOT NULL DEFAULT 0,
    currency               text        NOT NULL CHECK (currency IN ('USD', 'EUR', 'VND')),
    status                 text        NOT NULL DEFAULT 'pending'
                                       CHECK (status IN ('pending', 'approved', 'in_payout', 'paid', 'rejected',
                                           'reversed')),
    is_test                boolean     NOT NULL DEFAULT false,
    created_at             timestamptz NOT NULL DEFAULT now(),
    updated_at             timestamptz NOT NULL DEFAULT now(),
    available_on           timestamptz NOT NULL, -- the sale's date plus the hold (pkg/commission.Decide)
    -- Set when a member approved it in its hold (release_hold): payout runs take it before available_on.
    hold_released_at       timestamptz,
    approved_at            timestamptz,
    rejected_at            timestamptz,
    rejected_reason        text        CHECK (length(rejected_reason) BETWEEN 1 AND 500),
    payout_id              bigint      REFERENCES payouts (id),
    paid_at                timestamptz,
    CHECK (reversed_amount_cents BETWEEN 0 AND amount_cents),
    CONSTRAINT commissions_rejected_check CHECK ((status = 'rejected') = (rejected_reason IS NOT NULL)),
    CONSTRAINT commissions_payout_check CHECK ((status IN ('in_payout', 'paid')) = (payout_id IS NOT NULL))
);
CREATE INDEX commissions_partner_idx ON commissions (partner_id, created_at DESC);
CREATE INDEX commissions_program_status_idx ON commissions (program_id, status);
-- The commissions list (newest first, by program, by partner), a payout's commissions, and the ones
-- waiting for approval (the payout run and the auto-approval pass read these).
CREATE INDEX commissions_program_list_idx ON commissions (program_id, created_at DESC, id DESC);
CREATE INDEX commissions_payout_idx ON commissions (payout_id) WHERE payout_id IS NOT NULL;
CREATE INDEX commissions_open_idx ON commissions (program_id, currency, partner_id, id)
    WHERE status IN ('pending', 'approved') AND NOT is_test;
CREATE INDEX commissions_hold_idx ON commissions (available_on) WHERE status = 'pending';

-- A clawback is what a refund takes back of a commission already in a payout or paid: the commission is
-- never edited; the partner owes the amount in that currency until a payout nets it (payout_id).
CREATE TABLE commission_clawbacks (
    id             bigserial   PRIMARY KEY,
    commission_id  bigint      NOT NULL REFERENCES commissions (id),
    refund_id      bigint      NOT NULL UNIQUE REFERENCES refunds (id),
    program_id     bigint      NOT NULL REFERENCES programs (id),
    partner_id     bigint      NOT NULL REFERENCES partners (id),
    currency       text        NOT NULL CHECK (currency IN ('USD', 'EUR', 'VND')),
    amount_cents   bigint      NOT NULL CHECK (amount_cents > 0),
    is_test        boolean     NOT NULL DEFAULT false,
    payout_id      bigint      REFERENCES payouts (id),
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX commission_clawbacks_commission_idx ON commission_clawbacks (commission_id);
CREATE INDEX commission_clawbacks_owed_idx ON commission_clawbacks (program_id, partner_id, currency)
    WHERE payout_id IS NULL AND NOT is_test;
CREATE INDEX commission_clawbacks_payout_idx ON commission_clawbacks (payout_id) WHERE payout_id IS NOT NULL;

-- Idempotency-Key: the first answer to a POST, kept 24 hours, per account and key.
CREATE TABLE idempotency_keys (
    account_id    bigint      NOT NULL REFERENCES accounts (id),
    key           text        NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
    request_hash  bytea       NOT NULL,
    result        jsonb       NOT NULL,
    created_at    timestamptz NOT NULL,
    PRIMARY KEY (account_id, key)
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);

----------------------------------------------------------------------------------------------------------
-- Payment processors
----------------------------------------------------------------------------------------------------------

-- A program's payment-processor connection. The webhook secret verifies signatures, so it is kept as
-- given and never returned by the API.
CREATE TABLE processor_connections (
    id               bigserial PRIMARY KEY,
    program_id       bigint      NOT NULL REFERENCES programs (id) ON DELETE CASCADE,
    provider         text        NOT NULL CHECK (provider IN ('stripe')),
    webhook_secret   text        NOT NULL CHECK (webhook_secret <> ''),
    charges_enabled  boolean     NOT NULL DEFAULT false,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    UNIQUE (program_id, provider)
);

-- Every processed webhook event, so a redelivery changes nothing. One Stripe account may send the same
-- event to the webhook endpoints of several programs: an event is processed once per program.
CREATE TABLE processor_events (
    id            bigserial PRIMARY KEY,
    provider      text        NOT NULL CHECK (provider IN ('stripe')),
    event_id      text        NOT NULL,
    program_id    bigint      NOT NULL REFERENCES programs (id),
    event_type    text        NOT NULL,
    livemode      boolean     NOT NULL DEFAULT true,
    outcome       text        NOT NULL,
    reason        text,
    sale_id       bigint      REFERENCES sales (id),
    received_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT processor_events_program_event_key UNIQUE (provider, program_id, event_id)
);
CREATE INDEX processor_events_program_idx ON processor_events (program_id, received_at DESC);

----------------------------------------------------------------------------------------------------------
-- Counts: what every view of a program's activity reads (pkg/events)
----------------------------------------------------------------------------------------------------------

-- What the program's events count for, so that a period (a day, 7, 30 or 90 days, all) or the events list's
-- total is a few hundred rows to add up whatever its number of events. What counts is decided in Go
-- (pkg/counting) when an event is written; its writer's statement appends the deltas (below), and
-- roll_up_performance() folds them into these tables.
--
-- The figures, in four tables: by program and UTC hour (performance_hourly: the events list's hours and
-- readiness's last 24 hours), by program, UTC day, partner and currency (performance_daily: the partners'
-- table reads the days at a period's edges), by program, month, partner and currency (performance_monthly:
-- the months a period covers whole, and partners' all-time figures), and by program, day and currency
-- (performance_program_daily: the totals and the days' series, and the events list's days). Clicks and
-- leads have no currency (''); sales and their commissions count under the sale's. partner_id 0 is a lead
-- whose click and customer name no partner. clicks are counted clicks, bot_clicks the bots' (counted apart,
-- so that the dashboard can say how many it filtered); leads are settled leads, provisional_leads the
-- provisional ones (listed by the events list, counted nowhere until they settle); customers are customers
-- whose first sale it was; revenue_cents what the sales took less their refunds; commission_cents what
-- their commissions earned less reversals and clawbacks, rejected ones excluded. Test events count nowhere.
CREATE TABLE performance_hourly (
    program_id         bigint      NOT NULL REFERENCES programs (id) ON DELETE CASCADE,
    hour               timestamptz NOT NULL,
    clicks             bigint      NOT NULL DEFAULT 0,
    leads              bigint      NOT NULL DEFAULT 0,
    provisional_leads  bigint      NOT NULL DEFAULT 0,
    sales              bigint      NOT NULL DEFAULT 0,
    PRIMARY KEY (program_id, hour)
);
CREATE TABLE performance_daily (
    program_id         bigint NOT NULL REFERENCES programs (id) ON DELETE CASCADE,
    day                date   NOT NULL,
    partner_id         bigint NOT NULL,
    currency           text   NOT NULL,
    clicks             bigint NOT NULL DEFAULT 0,
    bot_clicks         bigint NOT NULL DEFAULT 0,
    leads              bigint NOT NULL DEFAULT 0,
    provisional_leads  bigint NOT NULL DEFAULT 0,
    sales              bigint NOT NULL DEFAULT 0,
    customers          bigint NOT NULL DEFAULT 0,
    revenue_cents      bigint NOT NULL DEFAULT 0,
    commission_cents   bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (program_id, day, partner_id, currency)
);
-- month is the month's first day.
CREATE TABLE performance_monthly (
    program_id         bigint NOT NULL REFERENCES programs (id) ON DELETE CASCADE,
    month              date   NOT NULL,
    partner_id         bigint NOT NULL,
    currency           text   NOT NULL,
    clicks             bigint NOT NULL DEFAULT 0,
    bot_clicks         bigint NOT NULL DEFAULT 0,
    leads              bigint NOT NULL DEFAULT 0,
    provisional_leads  bigint NOT NULL DEFAULT 0,
    sales              bigint NOT NULL DEFAULT 0,
    customers          bigint NOT NULL DEFAULT 0,
    revenue_cents      bigint NOT NULL DEFAULT 0,
    commission_cents   bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (program_id, month, partner_id, currency)
);
CREATE TABLE performance_program_daily (
    program_id         bigint NOT NULL REFERENCES programs (id) ON DELETE CASCADE,
    day                date   NOT NULL,
    currency           text   NOT NULL,
    clicks             bigint NOT NULL DEFAULT 0,
    bot_clicks         bigint NOT NULL DEFAULT 0,
    leads              bigint NOT NULL DEFAULT 0,
    provisional_leads  bigint NOT NULL DEFAULT 0,
    sales              bigint NOT NULL DEFAULT 0,
    customers          bigint NOT NULL DEFAULT 0,
    revenue_cents      bigint NOT NULL DEFAULT 0,
    commission_cents   bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (program_id, day, currency)
);

-- Counters off hot rows. Upserting the tables above inside an event's transaction would lock one row per
-- program and hour (or day, partner and currency) until commit, so every event of a program would wait for
-- the previous one's commit. So writers append their deltas here (performance_add: no conflict, no wait),
-- one row per key and statement, and roll_up_performance() folds them into the four tables every second,
-- in one transaction. Readers add the rows still waiting (the *_live views), so every count is exact at
-- every moment. No foreign key: a delta is appended on the hot path and folded within a second.
CREATE TABLE performance_deltas (
    program_id         bigint      NOT NULL,
    hour               timestamptz NOT NULL,
    partner_id         bigint      NOT NULL,
    currency           text        NOT NULL,
    clicks             bigint      NOT NULL DEFAULT 0,
    bot_clicks         bigint      NOT NULL DEFAULT 0,
    leads              bigint      NOT NULL DEFAULT 0,
    provisional_leads  bigint      NOT NULL DEFAULT 0,
    sales              bigint      NOT NULL DEFAULT 0,
    customers          bigint      NOT NULL DEFAULT 0,
    revenue_cents      bigint      NOT NULL DEFAULT 0,
    commission_cents   bigint      NOT NULL DEFAULT 0
);
CREATE INDEX performance_deltas_program_hour_idx ON performance_deltas (program_id, hour);

-- What readers use: the folded counts plus the deltas still waiting.
CREATE VIEW performance_hourly_live AS
    SELECT program_id, hour, clicks, leads, provisional_leads, sales FROM performance_hourly
    UNION ALL
    SELECT program_id, hour, clicks, leads, provisional_leads, sales FROM performance_deltas;
CREATE VIEW performance_live AS
    SELECT program_id, day, partner_id, currency, clicks, bot_clicks, leads, provisional_leads, sales, customers, revenue_cents,
        commission_cents FROM performance_daily
    UNION ALL
    SELECT program_id, (hour AT TIME ZONE 'UTC')::date, partner_id, currency, clicks, bot_clicks, leads, provisional_leads, sales,
        customers, revenue_cents, commission_cents FROM performance_deltas;
CREATE VIEW performance_monthly_live AS
    SELECT program_id, month, partner_id, currency, clicks, bot_clicks, leads, provisional_leads, sales, customers, revenue_cents,
        commission_cents FROM performance_monthly
    UNION ALL
    SELECT program_id, date_trunc('month', hour, 'UTC')::date, partner_id, currency, clicks, bot_clicks, leads, provisional_leads,
        sales, customers, revenue_cents, commission_cents FROM performance_deltas;
CREATE VIEW performance_program_live AS
    SELECT program_id, day, currency, clicks, bot_clicks, leads, provisional_leads, sales, customers, revenue_cents, commission_cents
    FROM performance_program_daily
    UNION ALL
    SELECT program_id, (hour AT TIME ZONE 'UTC')::date, currency, clicks, bot_clicks, leads, provisional_leads, sales, customers,
        revenue_cents, commission_cents FROM performance_deltas;

----------------------------------------------------------------------------------------------------------
-- Outbound webhooks (pkg/webhooks)
----------------------------------------------------------------------------------------------------------

-- A program's endpoints, the events written in the same transaction as the change they describe (the
-- outbox; pkg/webhooks' triggers), one delivery per event and endpoint, and every attempt of a delivery.
--
-- The outbox's rows carry no foreign keys (River's jobs neither). Each was checked at every insert, with
-- a row lock: every sale's statement locked its program's endpoint and each new event (FOR KEY SHARE; one
-- endpoint shared by concurrent sales makes multixacts), and every recorded attempt its delivery. Worse,
-- PostgreSQL keeps each check's plan for the session: made while a table was nearly empty it reads the
-- whole table, and until autovacuum next analyzes it each check did (4.5 ms per attempt at 78,000
-- deliveries: a drain at 360 a second instead of 1,500, docs/performance.md). The writers are
-- pkg/webhooks' functions, which write deliveries only for endpoints and events they have just read, and
-- the deletes cascade through pkg/webhooks' triggers (webhooks_on_*_delete).

CREATE TABLE webhook_endpoints (
    id                     bigserial   PRIMARY KEY,
    program_id             bigint      NOT NULL REFERENCES programs (id),
    url                    text        NOT NULL CHECK (length(url) BETWEEN 1 AND 2048),
    event_types            text[],     -- NULL: every type
    description            text        CHECK (length(description) <= 500),
    enabled                boolean     NOT NULL DEFAULT true,
    disabled_reason        text,
    secret_sealed          bytea       NOT NULL, -- AES-256-GCM under WEBHOOK_SECRETS_KEY
    previous_secret_sealed bytea,                -- signs too until previous_secret_until (a rotation)
    previous_secret_until  timestamptz,
    failing_since          timestamptz,          -- the first failed attempt since the last success
    created_at             timestamptz NOT NULL,
    updated_at             timestamptz NOT NULL,
    -- An endpoint gets the events that happened while it was enabled: those of a time it was disabled
    -- are for recover only, even if the worker picks them up after it is enabled again. By the
    -- database's clock, as the events' occurred_at.
    enabled_since          timestamptz NOT NULL DEFAULT now(),
    CHECK (enabled = (disabled_reason IS NULL))
);
CREATE INDEX webhook_endpoints_program_idx ON webhook_endpoints (program_id, id);

-- The outbox: written only for a program with an endpoint; kept 30 days (for resends and recovery). A
-- row is small: the change's type, its resource and what only the moment knew (the status it moved to,
-- the one before, the refund); data, the resource as the API shows it, is filled in when the delivery
-- worker first picks the event up (webhooks_fan_out, which also writes its deliveries), off the change's
-- transaction: writing either there cost the sale a tenth of its throughput (docs/performance.md).
CREATE TABLE webhook_events (
    id              bigserial   PRIMARY KEY,
    program_id      bigint      NOT NULL,
    type            text        NOT NULL,
    occurred_at     timestamptz NOT NULL,
    resource_id     bigint      NOT NULL, -- a lead, sale, commission, payout, partner_programs row or link
    status          text,                 -- commission.* and payout.*: the status it moved to
    previous_status text,                 -- commission.updated
    refund_id       bigint,               -- sale.refunded
    data            jsonb,                -- NULL until first picked up
    is_test         boolean     NOT NULL DEFAULT false, -- a test-mode change, or a sample
    sample          boolean     NOT NULL DEFAULT false  -- a sample (POST …/test): to its endpoint only, never recovered
);
CREATE INDEX webhook_events_program_idx ON webhook_events (program_id, occurred_at);
-- The clean-up's: events are written in time order, so a block range index is enough, and costs the
-- sale's statement almost nothing to keep.
CREATE INDEX webhook_events_occurred_idx ON webhook_events USING brin (occurred_at);
-- The events not yet picked up are those without data, found through this index (appended to, as ids
-- grow); it costs the change one entry per event.
CREATE INDEX webhook_events_unsent_idx ON webhook_events (id) WHERE data IS NULL;

-- One event to one endpoint: webhook_id (msg_ and 128 random bits) is the same for every attempt.
-- next_attempt_at NULL: at once. leased_until: a replica is attempting it; past it, another may (the
-- first was killed or stalled). Every index here is paid by each fan-out and each recorded attempt: the
-- log reads (endpoint_id, event_id), the worker the due index, the clean-up event_id.
CREATE TABLE webhook_deliveries (
    id              bigserial   PRIMARY KEY,
    webhook_id      text        NOT NULL,
    endpoint_id     bigint      NOT NULL,
    event_id        bigint      NOT NULL,
    status          text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempt_count   integer     NOT NULL DEFAULT 0, -- attempts of the current schedule (a resend starts another)
    next_attempt_at timestamptz,
    leased_until    timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (endpoint_id, event_id)
) WITH (fillfactor = 70); -- room for the claim's update (leased_until) to stay on its page (HOT)
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at NULLS FIRST, id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id);

-- Read only with their delivery, in time order: no key of their own.
CREATE TABLE webhook_attempts (
    delivery_id     bigint      NOT NULL,
    attempted_at    timestamptz NOT NULL,
    succeeded       boolean     NOT NULL,
    response_status integer,    -- NULL: no response (refused, timed out, …; error says which)
    duration_ms     integer     NOT NULL,
    response_body   text,       -- its first 1 KiB
    error           text
);
CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id, attempted_at);

----------------------------------------------------------------------------------------------------------
-- Mail, the audit log, the synthetic chain, the servers, the migrations' record
----------------------------------------------------------------------------------------------------------

-- Mail to send (invitations), written in the transaction of the change it tells of and sent at least
-- once by the server's mail courier. The bodies are cleared once sent: an invitation's link lives in
-- the mailbox it went to, not in the database.
CREATE TABLE mail_outbox (
    id               bigserial   PRIMARY KEY,
    to_address       text        NOT NULL,
    subject          text        NOT NULL,
    text_body        text,
    html_body        text,
    attempts         integer     NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    leased_until     timestamptz,
    sent_at          timestamptz,
    last_error       text,
    created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mail_outbox_due_idx ON mail_outbox (next_attempt_at) WHERE sent_at IS NULL;

-- Operator actions (suspend, unsuspend, key rotation mark, key regeneration): who, what, when. Each row
-- is written in the transaction of the action it records. No foreign keys: the record outlives what it
-- names.
CREATE TABLE audit_log (
    id               bigserial PRIMARY KEY,
    at               timestamptz NOT NULL,
    actor            text        NOT NULL CHECK (actor <> ''),
    actor_account_id bigint,
    action           text        NOT NULL,
    target           text        NOT NULL,
    detail           jsonb       NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_log_newest ON audit_log (at DESC, id DESC);

-- Runs of the CLI's synthetic click → lead → sale chain: the hourly cap counts them, readiness shows
-- the last verdict.
CREATE TABLE synthetic_chains (
    id            bigserial PRIMARY KEY,
    program_id    bigint      NOT NULL REFERENCES programs (id) ON DELETE CASCADE,
    short_code    text        NOT NULL,
    customer_key  text        NOT NULL,
    click_verdict text        NOT NULL,
    lead_verdict  text        NOT NULL,
    sale_verdict  text        NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX synthetic_chains_program_idx ON synthetic_chains (program_id, created_at DESC);

-- The reftrackd processes serving this database, each announcing itself every few seconds
-- (pkg/platform/peers): a replica without shared rate limits (REDIS_URL) warns when it has peers, since
-- each of them then allows the whole limit.
CREATE TABLE server_instances (
    id            text        PRIMARY KEY,
    hostname      text        NOT NULL,
    shared_limits boolean     NOT NULL,
    started_at    timestamptz NOT NULL,
    seen_at       timestamptz NOT NULL
);

-- Rolling deploys: which migrations the build before them can run against. `reftrackd migrate up`
-- records a row for each migration it applies, backward_compatible when the migration's first line is
-- the compatibility marker (db.CompatibleMarker: an expand step, new tables, nullable or defaulted
-- columns; nothing the previous release reads or writes is changed or removed). A build finding the
-- schema newer than itself serves only when every newer migration is recorded here as backward
-- compatible (db.CheckCurrent).
CREATE TABLE schema_compatibility (
    version             bigint      PRIMARY KEY,
    backward_compatible boolean     NOT NULL,
    applied_at          timestamptz NOT NULL DEFAULT now()
);
-- The baseline's own row (not backward compatible: nothing came before it), written with the schema. A
-- database made by the migrations the baseline replaced has none, which is how it is told apart
-- (db.ErrPreBaseline).
INSERT INTO schema_compatibility (version, backward_compatible) VALUES (1, false);
