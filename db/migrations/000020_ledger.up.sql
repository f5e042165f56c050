-- reftrack: backward-compatible
-- After the commission (issue 27): a commission is held, approved, paid out and clawed back by ledger
-- rules (pkg/ledger, which now owns commissions). The previous build keeps inserting and reversing
-- commissions as before: its inserts leave available_on NULL, which this build fills (ledger_backfill) and
-- reads as still in hold meanwhile. Approval and payouts exist only in this build.

ALTER TABLE programs
    ADD COLUMN hold_days integer NOT NULL DEFAULT 30 CHECK (hold_days BETWEEN 0 AND 365),
    ADD COLUMN commission_approval text NOT NULL DEFAULT 'auto' CHECK (commission_approval IN ('auto', 'manual')),
    ADD COLUMN payout_minimum_cents bigint NOT NULL DEFAULT 0 CHECK (payout_minimum_cents BETWEEN 0 AND 1000000000);

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

ALTER TABLE commissions DROP CONSTRAINT commissions_status_check;
ALTER TABLE commissions
    ADD CONSTRAINT commissions_status_check CHECK (status IN ('pending', 'partially_reversed', 'reversed', 'approved',
        'in_payout', 'paid', 'rejected')),
    ADD COLUMN available_on    timestamptz,
    ADD COLUMN approved_at     timestamptz,
    ADD COLUMN rejected_at     timestamptz,
    ADD COLUMN rejected_reason text CHECK (length(rejected_reason) BETWEEN 1 AND 500),
    ADD COLUMN payout_id       bigint REFERENCES payouts (id),
    ADD COLUMN paid_at         timestamptz,
    ADD CONSTRAINT commissions_rejected_check CHECK ((status = 'rejected') = (rejected_reason IS NOT NULL)),
    ADD CONSTRAINT commissions_payout_check CHECK ((status IN ('in_payout', 'paid')) = (payout_id IS NOT NULL));

-- Existing commissions were made under the default hold.
UPDATE commissions c SET available_on = s.sale_date + interval '30 days' FROM sales s WHERE s.id = c.sale_id;

-- The commissions list (newest first, by program, by partner), a payout's commissions, and the ones
-- waiting for approval (the payout run and the auto-approval pass read these).
CREATE INDEX commissions_program_list_idx ON commissions (program_id, created_at DESC, id DESC);
CREATE INDEX commissions_payout_idx ON commissions (payout_id) WHERE payout_id IS NOT NULL;
CREATE INDEX commissions_open_idx ON commissions (program_id, currency, partner_id, id)
    WHERE status IN ('pending', 'partially_reversed', 'approved') AND NOT is_test;
CREATE INDEX commissions_unfilled_idx ON commissions (id) WHERE available_on IS NULL;
CREATE INDEX commissions_hold_idx ON commissions (available_on) WHERE status IN ('pending', 'partially_reversed');

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
