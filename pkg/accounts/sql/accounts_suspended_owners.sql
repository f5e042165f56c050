-- accounts_suspended_owners lists the workspace's suspended owners. A program whose workspace has one is
-- suspended: its keys, and its keyless clicks and leads, are refused (accounts.ErrSuspended). A workspace
-- may have several owners; any suspended one suspends its programs, so that an abuser cannot keep a
-- program running by granting the owner role to a second account.
--
-- This is the rule's one definition: the key lookup, the click, the lead and the program read ask
-- `EXISTS (SELECT FROM accounts_suspended_owners(p.workspace_id))` in the statement they run anyway. A
-- set-returning SQL function, STABLE, not STRICT and without SET options, so PostgreSQL inlines it into
-- the caller's query (a scalar one holding a subquery would be called row by row instead): an index probe
-- of workspace_members (workspace_id, …) and the accounts primary key, no call and no extra round trip.
CREATE OR REPLACE FUNCTION accounts_suspended_owners(p_workspace bigint) RETURNS SETOF bigint
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT sa.id FROM workspace_members sm JOIN accounts sa ON sa.id = sm.account_id
        WHERE sm.workspace_id = p_workspace AND sm.role = 'owner' AND sa.suspended_at IS NOT NULL
$$;
