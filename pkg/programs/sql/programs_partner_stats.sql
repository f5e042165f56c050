-- programs_partner_stats answers the real events of the program's partners (of p_partners only, when not
-- NULL), all time, as the counts count them (pkg/counting: clicks without the bots', settled leads, sales;
-- test events and provisional leads nowhere). One row per partner of the program. Read by the partner
-- list (pkg/programs) and by the partner webhooks' data (PartnersByEnrollment). It reads the monthly
-- counts: a row per partner, month and currency.
CREATE OR REPLACE FUNCTION programs_partner_stats(p_program bigint, p_partners bigint[])
RETURNS TABLE (partner_id bigint, clicks bigint, leads bigint, sales bigint)
LANGUAGE sql STABLE AS $$
    SELECT pp.partner_id, COALESCE(sum(m.clicks), 0)::bigint, COALESCE(sum(m.leads), 0)::bigint, COALESCE(sum(m.sales), 0)::bigint
    FROM partner_programs pp
    LEFT JOIN performance_monthly_live m ON m.program_id = pp.program_id AND m.partner_id = pp.partner_id
    WHERE pp.program_id = p_program AND (p_partners IS NULL OR pp.partner_id = ANY (p_partners))
    GROUP BY pp.partner_id
$$;
