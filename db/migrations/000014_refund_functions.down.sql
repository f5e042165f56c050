DROP FUNCTION IF EXISTS sales_refund(bigint[], text[], bigint[], text[], text[], bigint[], bigint[], bigint[], bigint[],
    text[], bigint[], text[], text[], text[]);
DROP FUNCTION IF EXISTS refunds_state(bigint[], text[], text[]);
