-- Fails while money in another currency than the interface's three is recorded.
ALTER TABLE commission_clawbacks DROP CONSTRAINT commission_clawbacks_currency_check,
    ADD CONSTRAINT commission_clawbacks_currency_check CHECK (currency IN ('USD', 'EUR', 'VND'));
ALTER TABLE commissions DROP CONSTRAINT commissions_currency_check,
    ADD CONSTRAINT commissions_currency_check CHECK (currency IN ('USD', 'EUR', 'VND'));
ALTER TABLE payouts DROP CONSTRAINT payouts_currency_check,
    ADD CONSTRAINT payouts_currency_check CHECK (currency IN ('USD', 'EUR', 'VND'));
ALTER TABLE sales DROP CONSTRAINT sales_currency_check,
    ADD CONSTRAINT sales_currency_check CHECK (currency IN ('USD', 'EUR', 'VND'));
ALTER TABLE programs DROP CONSTRAINT programs_default_currency_listed,
    DROP COLUMN default_currency, DROP COLUMN currencies;
