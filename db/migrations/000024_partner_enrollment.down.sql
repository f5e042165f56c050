-- pkg/webhooks' trigger on enrollments (db.ApplyFunctions attaches it) goes with the columns it reads.
DROP TRIGGER IF EXISTS webhooks_partner_programs_update ON partner_programs;
DROP TABLE mail_outbox;
ALTER TABLE login_sessions DROP CONSTRAINT login_sessions_check;
DELETE FROM login_sessions WHERE purpose = 'partner';
ALTER TABLE login_sessions ADD CONSTRAINT login_sessions_check CHECK (status = 'pending' OR account_id IS NOT NULL);
ALTER TABLE login_sessions DROP COLUMN partner_person_id, DROP COLUMN return_to;
ALTER TABLE login_sessions DROP CONSTRAINT login_sessions_purpose_check;
ALTER TABLE login_sessions ADD CONSTRAINT login_sessions_purpose_check CHECK (purpose IN ('cli', 'dashboard'));
DROP TABLE partner_sessions;
DROP INDEX partners_email_idx;
DROP TABLE partner_people;
DROP TABLE partner_invitations;
ALTER TABLE partners DROP CONSTRAINT partners_payout_details_check,
    DROP COLUMN payout_method, DROP COLUMN payout_details, DROP COLUMN payout_updated_at;
-- Banned partners stay out (paused is never paid nor counted); approved ones are active again; the rest
-- (invited, applied, rejected) never were partners.
UPDATE partner_programs SET status = CASE status WHEN 'approved' THEN 'active' WHEN 'banned' THEN 'paused' ELSE 'removed' END
    WHERE status NOT IN ('active', 'paused', 'removed');
ALTER TABLE partner_programs DROP COLUMN status_reason, DROP COLUMN status_changed_at,
    DROP COLUMN application_message, DROP COLUMN application_website;
ALTER TABLE partner_programs DROP CONSTRAINT partner_programs_status_check;
ALTER TABLE partner_programs ADD CONSTRAINT partner_programs_status_check CHECK (status IN ('active', 'paused', 'removed'));
ALTER TABLE programs DROP COLUMN enrollment, DROP COLUMN partner_approval, DROP COLUMN partner_link_codes;
