-- A click whose click_id carries no month is noted in clicks_legacy (which also keeps those unique).
CREATE OR REPLACE FUNCTION clicks_note_legacy() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO clicks_legacy (click_id, click_month)
    SELECT n.click_id, n.click_month FROM new_rows n WHERE clicks_month(n.click_id) IS NULL;
    RETURN NULL;
END $$;
