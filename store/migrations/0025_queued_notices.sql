-- A message waiting for a turn slot (bot.max_turns) is told so in a
-- "queued: N ahead" notice, edited as the line moves. The notice belongs
-- to the message's inbox row: its platform message (the neutral Ref,
-- JSON) is kept there, so that the start after a crash edits that notice
-- to the message's new place, or to "started", instead of leaving its last
-- number up.
ALTER TABLE inbox ADD COLUMN queued_notice TEXT;
