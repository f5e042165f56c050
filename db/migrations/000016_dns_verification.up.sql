-- Domain verification: each program proves its domain with a TXT record `_reftrack.<domain>` whose value
-- names the program's own token (programs.DNSRecordOf). dns_checked_at spaces the lookups out: status
-- requests look the record up at most once a minute per program.
ALTER TABLE programs ADD COLUMN dns_token text NOT NULL DEFAULT replace(gen_random_uuid()::text, '-', '');
ALTER TABLE programs ADD COLUMN dns_checked_at timestamptz;
