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
