-- The web chat reads its messages by page from here rather than holding
-- them all in memory: a thread's messages in the order posted (the number
-- in the id "m<n>"), and what changed after a sequence number (the replay
-- of an event stream).
CREATE INDEX web_messages_thread ON web_messages(thread, CAST(substr(id, 2) AS INTEGER));
CREATE INDEX web_messages_seq ON web_messages(seq);
