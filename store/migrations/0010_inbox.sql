-- The inbox: every platform event and button click, written before the
-- platform is acknowledged (a Slack envelope, a Discord interaction, the
-- web chat's 201/202), so that a crash, a stop, or a deep queue loses
-- none. done_at records that the event was handed to its work (a vote
-- cast, a message's turn begun); a start-up routes every row without it,
-- in order, once.
CREATE TABLE inbox (
    id          INTEGER PRIMARY KEY,
    platform    TEXT    NOT NULL,
    event_id    TEXT    NOT NULL DEFAULT '',
    event       TEXT    NOT NULL, -- the neutral event, JSON
    received_at INTEGER NOT NULL,
    done_at     INTEGER
);
CREATE INDEX inbox_open ON inbox(id) WHERE done_at IS NULL;
