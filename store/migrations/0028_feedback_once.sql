-- One person's say on one answer: repeated clicks of the feedback buttons
-- counted each (three "good" clicks were three good answers), so a row is
-- now one (platform, turn, person) and a later click replaces it: the
-- last click wins. Rows already kept are deduplicated the same way,
-- keeping each person's latest click on each turn.
DELETE FROM feedback WHERE EXISTS (
    SELECT 1 FROM feedback AS later
    WHERE later.platform = feedback.platform AND later.turn_id = feedback.turn_id
      AND later.user_id = feedback.user_id
      AND (later.at > feedback.at OR (later.at = feedback.at AND later.id > feedback.id))
);
CREATE UNIQUE INDEX feedback_once ON feedback (platform, turn_id, user_id);
