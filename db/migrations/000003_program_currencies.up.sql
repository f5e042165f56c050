-- reftrack: backward-compatible
-- A program's currencies: any ISO 4217 codes it lists (pkg/commission checks them; their minor units are
-- ISO's), and the default a sale without a currency is in. Money columns take any three-letter code: the
-- program's list is checked where money is recorded.
ALTER TABLE programs
    ADD COLUMN currencies text[] NOT NULL DEFAULT '{USD,EUR,VND}' CHECK (cardinality(currencies) BETWEEN 1 AND 30),
    ADD COLUMN default_currency text NOT NULL DEFAULT 'USD',
    ADD CONSTRAINT programs_default_currency_listed CHECK (default_currency = ANY (currencies));
ALTER TABLE sales DROP CONSTRAINT sales_currency_check,
    ADD CONSTRAINT sales_currency_check CHECK (currency ~ '^[A-Z]{3}$');
ALTER TABLE payouts DROP CONSTRAINT payouts_currency_check,
    ADD CONSTRAINT payouts_currency_check CHECK (currency ~ '^[A-Z]{3}$');
ALTER TABLE commissions DROP CONSTRAINT commissions_currency_check,
    ADD CONSTRAINT commissions_currency_check CHECK (currency ~ '^[A-Z]{3}$');
ALTER TABLE commission_clawbacks DROP CONSTRAINT commission_clawbacks_currency_check,
    ADD CONSTRAINT commission_clawbacks_currency_check CHECK (currency ~ '^[A-Z]{3}$');
