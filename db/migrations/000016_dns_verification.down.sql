ALTER TABLE programs DROP COLUMN IF EXISTS dns_checked_at;
ALTER TABLE programs DROP COLUMN IF EXISTS dns_token;
