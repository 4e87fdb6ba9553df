-- The postmortem last posted in a thread (issue 33): the web chat's
-- download serves it as posted, so a download never asks the model again
-- and says what the thread was told. One row per thread, replaced by the
-- next `postmortem`; it goes with its session (the foreign key) and, for
-- a web thread, with the thread's messages past web.retention.
CREATE TABLE postmortems (
    session_id INTEGER PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    markdown   TEXT    NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE TRIGGER postmortems_web_retention AFTER DELETE ON web_messages
BEGIN
    DELETE FROM postmortems WHERE session_id IN
        (SELECT id FROM sessions WHERE platform = 'web' AND channel = OLD.channel AND thread = OLD.thread);
END;
