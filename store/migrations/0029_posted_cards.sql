-- The task cards a stream shows still pending or in progress (Slack's
-- task_update chunks), as JSON [{"id","title"}], kept with the stream's
-- record: after a crash, recovery closes each of them in the stop that
-- carries its note, for the killed process alone knew them and Slack
-- would show them running for good. The titles are the redacted text
-- that was shown.
ALTER TABLE posted_messages ADD COLUMN open_cards TEXT NOT NULL DEFAULT '';
