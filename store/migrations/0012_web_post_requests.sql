-- The request that posted a person's message to the web chat: its
-- client's X-Request-Id (hashed with the client), the post's digest, and
-- whether it went to the bot. Kept in the message's own row, written in
-- the same statement as the message, so that a post retried with the same
-- X-Request-Id after a restart gets the first answer instead of making a
-- second message (issue 12, item 0).
ALTER TABLE web_messages ADD COLUMN request_key TEXT NOT NULL DEFAULT '';
ALTER TABLE web_messages ADD COLUMN request_digest TEXT NOT NULL DEFAULT '';
ALTER TABLE web_messages ADD COLUMN for_bot INTEGER NOT NULL DEFAULT 0;
CREATE INDEX web_messages_request ON web_messages(request_key) WHERE request_key != '';
