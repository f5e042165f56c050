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
