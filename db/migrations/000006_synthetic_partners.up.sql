-- The partner that `reftrack test --chain` records its synthetic chain against is marked by a column,
-- not recognised by its e-mail address: partner counts and the readiness payout gate leave it out, and
-- it is never paid. Partners stored before this column existed keep their meaning: the synthetic
-- fixture's address was synthetic+<program id>@reftrack.test.
ALTER TABLE partners ADD COLUMN synthetic boolean NOT NULL DEFAULT false;
UPDATE partners SET synthetic = true WHERE email LIKE 'synthetic+%@reftrack.test';
