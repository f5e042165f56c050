-- clicks_lookup_month is the month (partition) of a click_id: the one it carries (clicks_month), else, for
-- a click_id made before ids carried their month, the one clicks_legacy noted.
CREATE OR REPLACE FUNCTION clicks_lookup_month(p_click_id text) RETURNS date LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT COALESCE(clicks_month(p_click_id), (SELECT l.click_month FROM clicks_legacy l WHERE l.click_id = p_click_id))
$$;
