-- programs_partner_stats counts the real events of the program's partners (of p_partners only, when not
-- NULL), all time: clicks (bots left out), settled leads (by their customer's partner) and sales; test
-- events never count. One row per partner of the program. Read by the partner list (pkg/programs) and
-- by the partner webhooks' data (pkg/webhooks). It reads the program's events by their per-program
-- indexes: fine for a list a person opens or an event of a partner, not for a hot path.
CREATE OR REPLACE FUNCTION programs_partner_stats(p_program bigint, p_partners bigint[])
RETURNS TABLE (partner_id bigint, clicks bigint, leads bigint, sales bigint)
LANGUAGE sql STABLE AS $$
    WITH c AS (
        SELECT k.partner_id, count(*) AS n FROM clicks k
        WHERE k.program_id = p_program AND NOT k.is_test AND NOT k.is_bot
            AND (p_partners IS NULL OR k.partner_id = ANY (p_partners))
        GROUP BY k.partner_id
    ), l AS (
        SELECT cu.partner_id, count(*) AS n FROM leads le JOIN customers cu ON cu.id = le.customer_id
        WHERE le.program_id = p_program AND le.status = 'settled' AND NOT le.is_test AND cu.partner_id IS NOT NULL
            AND (p_partners IS NULL OR cu.partner_id = ANY (p_partners))
        GROUP BY cu.partner_id
    ), s AS (
        SELECT sa.partner_id, count(*) AS n FROM sales sa
        WHERE sa.program_id = p_program AND NOT sa.is_test AND (p_partners IS NULL OR sa.partner_id = ANY (p_partners))
        GROUP BY sa.partner_id
    )
    SELECT pp.partner_id, COALESCE(c.n, 0), COALESCE(l.n, 0), COALESCE(s.n, 0)
    FROM partner_programs pp
    LEFT JOIN c ON c.partner_id = pp.partner_id LEFT JOIN l ON l.partner_id = pp.partner_id
    LEFT JOIN s ON s.partner_id = pp.partner_id
    WHERE pp.program_id = p_program AND (p_partners IS NULL OR pp.partner_id = ANY (p_partners))
$$;
