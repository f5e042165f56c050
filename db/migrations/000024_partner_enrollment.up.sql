-- reftrack: backward-compatible
-- Partners serve themselves (issue 29): enrollment statuses, invitations by mail, applications to open
-- programs, partner people who sign in, and their payout details. The previous build runs against this
-- schema unchanged: it writes partner-program relationships as 'active' (read as approved), never reads
-- the new columns, and has no route to the new tables.

-- How a program takes partners: by invitation only, or also by application on its public page
-- (/p/{slug}); applications wait for a member's approval, or are approved at once.
ALTER TABLE programs
    ADD COLUMN enrollment text NOT NULL DEFAULT 'invite_only' CHECK (enrollment IN ('invite_only', 'open')),
    ADD COLUMN partner_approval text NOT NULL DEFAULT 'manual' CHECK (partner_approval IN ('manual', 'auto')),
    -- Whether an approved partner may make their own link codes in the portal.
    ADD COLUMN partner_link_codes boolean NOT NULL DEFAULT true;

-- invited -> approved; pending (applied) -> approved | rejected; approved -> banned. 'active' (every
-- relationship made before this migration, and by the previous build) reads as approved; 'paused' and
-- 'removed' were never written.
ALTER TABLE partner_programs DROP CONSTRAINT partner_programs_status_check;
ALTER TABLE partner_programs ADD CONSTRAINT partner_programs_status_check
    CHECK (status IN ('active', 'paused', 'removed', 'invited', 'pending', 'approved', 'rejected', 'banned'));
ALTER TABLE partner_programs
    ADD COLUMN status_reason        text,
    ADD COLUMN status_changed_at    timestamptz,
    ADD COLUMN application_message  text,
    ADD COLUMN application_website  text;

-- Payout details the partner gives in the portal, sealed (AES-256-GCM) with a key derived from
-- WEBHOOK_SECRETS_KEY: a copy of the database alone reads none. payout_method says which kind they are.
ALTER TABLE partners
    ADD COLUMN payout_method      text CHECK (payout_method IN ('paypal', 'bank_transfer')),
    ADD COLUMN payout_details     bytea,
    ADD COLUMN payout_updated_at  timestamptz,
    ADD CONSTRAINT partners_payout_details_check CHECK ((payout_method IS NULL) = (payout_details IS NULL));

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
CREATE INDEX partners_email_idx ON partners (lower(email));

-- A portal session (cookie), stored as the token's SHA-256.
CREATE TABLE partner_sessions (
    id          bigserial   PRIMARY KEY,
    person_id   bigint      NOT NULL REFERENCES partner_people (id) ON DELETE CASCADE,
    token_hash  bytea       NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    revoked_at  timestamptz
);

-- A portal sign-in goes through the same login sessions (and the issuer's one redirect URI) as the
-- dashboard's; it ends signed in as a partner person rather than an account, and returns to the page it
-- started from.
ALTER TABLE login_sessions DROP CONSTRAINT login_sessions_purpose_check;
ALTER TABLE login_sessions ADD CONSTRAINT login_sessions_purpose_check CHECK (purpose IN ('cli', 'dashboard', 'partner'));
ALTER TABLE login_sessions
    ADD COLUMN partner_person_id  bigint REFERENCES partner_people (id) ON DELETE CASCADE,
    ADD COLUMN return_to          text;
ALTER TABLE login_sessions DROP CONSTRAINT login_sessions_check;
ALTER TABLE login_sessions ADD CONSTRAINT login_sessions_check
    CHECK (status = 'pending' OR account_id IS NOT NULL OR partner_person_id IS NOT NULL);

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
