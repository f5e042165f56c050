-- reftrack initial schema. Rules the interface states are enforced here too, so that no code path can
-- break them: processor_event_id (the sale's transaction_id) is globally unique, customer_key is unique
-- per program, short_link is unique, every reference is a foreign key.

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

CREATE TABLE programs (
    id                       bigserial PRIMARY KEY,
    workspace_id             bigint        NOT NULL REFERENCES workspaces (id),
    name                     text          NOT NULL CHECK (name <> ''),
    domain                   text          NOT NULL CHECK (domain <> ''),
    slug                     text          NOT NULL UNIQUE,
    status                   text          NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused')),
    lead_auth                text          NOT NULL DEFAULT 'server_required'
                                           CHECK (lead_auth IN ('server_required', 'browser_allowed')),
    cookie_window_days       integer       NOT NULL DEFAULT 60 CHECK (cookie_window_days > 0),
    attribution_window_days  integer       NOT NULL DEFAULT 60 CHECK (attribution_window_days > 0),
    commission_type          text          NOT NULL
                                           CHECK (commission_type IN ('percent', 'fixed', 'recurring_percent', 'recurring_fixed')),
    -- Percent for percent types, major currency units for fixed types; decimal, never a float.
    commission_rate          numeric(14,4) NOT NULL CHECK (commission_rate > 0),
    -- Recurring types: months a customer's payments keep paying; NULL = lifetime.
    commission_duration_months integer     CHECK (commission_duration_months > 0),
    allowed_origins          text[]        NOT NULL DEFAULT '{}',
    dns_verified_at          timestamptz,
    created_at               timestamptz   NOT NULL DEFAULT now(),
    updated_at               timestamptz   NOT NULL DEFAULT now()
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
    id            bigserial PRIMARY KEY,
    workspace_id  bigint      NOT NULL REFERENCES workspaces (id),
    name          text        NOT NULL,
    email         text        NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX partners_email_key ON partners (workspace_id, lower(email));

CREATE TABLE partner_programs (
    id            bigserial PRIMARY KEY,
    partner_id    bigint      NOT NULL REFERENCES partners (id),
    program_id    bigint      NOT NULL REFERENCES programs (id),
    status        text        NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused', 'removed')),
    -- Counters for dashboards; updated best-effort after the event commits (a failure is logged, never
    -- fails the event). Clicks are counted by query: a counter row per click would serialise the hot path.
    leads_count   bigint      NOT NULL DEFAULT 0,
    sales_count   bigint      NOT NULL DEFAULT 0,
    created_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (partner_id, program_id)
);
CREATE INDEX partner_programs_program_idx ON partner_programs (program_id);

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

CREATE TABLE clicks (
    id                 bigserial PRIMARY KEY,
    click_id           text        NOT NULL UNIQUE,
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
    created_at         timestamptz NOT NULL DEFAULT now()
);
-- Events list and counts: real clicks of a program, newest first.
CREATE INDEX clicks_program_events_idx ON clicks (program_id, click_timestamp DESC, id DESC)
    WHERE NOT is_test AND NOT is_bot;
-- Repeat-visitor lookup on the click hot path.
CREATE INDEX clicks_visitor_idx ON clicks (link_id, visitor_hash, click_timestamp DESC)
    WHERE visitor_hash IS NOT NULL;

-- A customer exists from a lead or a sale on. customer_key is bound only by a server-mode lead, a sale or
-- a processor webhook (never by a browser), and is unique per program.
CREATE TABLE customers (
    id                  bigserial PRIMARY KEY,
    program_id          bigint      NOT NULL REFERENCES programs (id),
    customer_key        text        CHECK (customer_key <> ''),
    click_ref           bigint      REFERENCES clicks (id),
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
    click_ref       bigint      REFERENCES clicks (id),
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
    CHECK ((status = 'settled') = (settled_at IS NOT NULL))
);
CREATE INDEX leads_program_events_idx ON leads (program_id, lead_timestamp DESC, id DESC) WHERE NOT is_test;
CREATE INDEX leads_click_idx ON leads (click_ref);
-- One settled lead per customer, and at most one provisional lead per click.
CREATE UNIQUE INDEX leads_one_settled_per_customer ON leads (customer_id) WHERE status = 'settled';
CREATE UNIQUE INDEX leads_one_provisional_per_click ON leads (click_ref) WHERE status = 'provisional';

CREATE TABLE sales (
    id                     bigserial PRIMARY KEY,
    program_id             bigint      NOT NULL REFERENCES programs (id),
    customer_id            bigint      NOT NULL REFERENCES customers (id),
    partner_id             bigint      NOT NULL REFERENCES partners (id),
    click_ref              bigint      REFERENCES clicks (id),
    click_id               text,
    -- The transaction_id: a global idempotency key across all programs.
    processor_event_id     text        NOT NULL UNIQUE CHECK (processor_event_id <> ''),
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
    CHECK (refunded_amount_cents BETWEEN 0 AND amount_cents)
);
CREATE INDEX sales_program_events_idx ON sales (program_id, sale_date DESC, id DESC) WHERE NOT is_test;
CREATE INDEX sales_customer_idx ON sales (customer_id);
CREATE INDEX sales_click_idx ON sales (click_ref);

-- One commission per sale, written in the sale's transaction.
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
                                       CHECK (status IN ('pending', 'partially_reversed', 'reversed')),
    is_test                boolean     NOT NULL DEFAULT false,
    created_at             timestamptz NOT NULL DEFAULT now(),
    updated_at             timestamptz NOT NULL DEFAULT now(),
    CHECK (reversed_amount_cents BETWEEN 0 AND amount_cents)
);
CREATE INDEX commissions_partner_idx ON commissions (partner_id, created_at DESC);
CREATE INDEX commissions_program_status_idx ON commissions (program_id, status);

CREATE TABLE refunds (
    id                         bigserial PRIMARY KEY,
    sale_id                    bigint      NOT NULL REFERENCES sales (id),
    program_id                 bigint      NOT NULL REFERENCES programs (id),
    reason                     text        NOT NULL CHECK (reason IN ('refund', 'chargeback')),
    refund_reason              text,
    amount_cents               bigint      NOT NULL CHECK (amount_cents > 0),
    commission_reversed_cents  bigint      NOT NULL DEFAULT 0 CHECK (commission_reversed_cents >= 0),
    -- A processor's refund or dispute id, so a redelivered webhook cannot refund twice.
    processor_refund_id        text        UNIQUE,
    source                     text        NOT NULL CHECK (source IN ('api', 'webhook')),
    created_at                 timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX refunds_sale_idx ON refunds (sale_id);

-- CLI login sessions, keyed by state; pending for 5 minutes. The login token is minted at the first
-- poll after sign-in, so no plaintext token is ever stored.
CREATE TABLE login_sessions (
    id             bigserial PRIMARY KEY,
    state          text        NOT NULL UNIQUE,
    status         text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'signed_in', 'consumed')),
    account_id     bigint      REFERENCES accounts (id) ON DELETE CASCADE,
    code_verifier  text,
    nonce          text,
    created_at     timestamptz NOT NULL DEFAULT now(),
    expires_at     timestamptz NOT NULL,
    signed_in_at   timestamptz,
    consumed_at    timestamptz,
    CHECK (status = 'pending' OR account_id IS NOT NULL)
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

-- Every processed webhook event, so a redelivery changes nothing.
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
    UNIQUE (provider, event_id)
);
CREATE INDEX processor_events_program_idx ON processor_events (program_id, received_at DESC);
