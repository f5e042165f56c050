-- reftrack: backward-compatible
-- Outbound webhooks (issue 28): a program's endpoints, the events written in the same transaction as the
-- change they describe (the outbox; pkg/webhooks' triggers, attached by db.ApplyFunctions), one delivery
-- per event and endpoint, and every attempt of a delivery. The previous build writes sales, commissions
-- and the rest as before; the triggers record its changes too.

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
    CHECK (enabled = (disabled_reason IS NULL))
);
CREATE INDEX webhook_endpoints_program_idx ON webhook_endpoints (program_id, id);

-- The outbox: written only for a program with an endpoint; kept 30 days (for resends and recovery). A
-- row is small: the change's type, its resource and what only the moment knew (the status it moved to,
-- the one before, the refund); data, the resource as the API shows it, is filled in when the event is
-- first sent (webhooks_render), off the change's transaction: writing it there cost the sale a tenth
-- of its throughput (docs/performance.md).
CREATE TABLE webhook_events (
    id              bigserial   PRIMARY KEY,
    program_id      bigint      NOT NULL,
    type            text        NOT NULL,
    occurred_at     timestamptz NOT NULL,
    resource_id     bigint      NOT NULL, -- a lead, sale, commission, payout, partner_programs row or link
    status          text,                 -- commission.* and payout.*: the status it moved to
    previous_status text,                 -- commission.updated
    refund_id       bigint,               -- sale.refunded
    data            jsonb,                -- NULL until first sent
    is_test         boolean     NOT NULL DEFAULT false, -- a test-mode change, or a sample
    sample          boolean     NOT NULL DEFAULT false  -- a sample (POST …/test): to its endpoint only, never recovered
);
CREATE INDEX webhook_events_program_idx ON webhook_events (program_id, occurred_at);
-- The clean-up's: events are written in time order, so a block range index is enough, and costs the
-- sale's statement almost nothing to keep.
CREATE INDEX webhook_events_occurred_idx ON webhook_events USING brin (occurred_at);

-- One event to one endpoint: webhook_id (msg_ and 128 random bits) is the same for every attempt.
-- next_attempt_at NULL: at once. leased_until: a replica is attempting it; past it, another may (the
-- first was killed or stalled). Every index here is paid by the sale's statement and by each recorded
-- attempt: the log reads (endpoint_id, event_id), the worker the due index, the clean-up event_id.
CREATE TABLE webhook_deliveries (
    id              bigserial   PRIMARY KEY,
    webhook_id      text        NOT NULL,
    endpoint_id     bigint      NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    event_id        bigint      NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
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
    delivery_id     bigint      NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    attempted_at    timestamptz NOT NULL,
    succeeded       boolean     NOT NULL,
    response_status integer,    -- NULL: no response (refused, timed out, …; error says which)
    duration_ms     integer     NOT NULL,
    response_body   text,       -- its first 1 KiB
    error           text
);
CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id, attempted_at);
