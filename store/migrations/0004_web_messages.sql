-- The embedded web chat's messages: the latest state of each, so the chat
-- survives a restart.
CREATE TABLE web_messages (
    id         TEXT    PRIMARY KEY,
    channel    TEXT    NOT NULL,
    thread     TEXT    NOT NULL,
    user       TEXT    NOT NULL DEFAULT '',
    bot        INTEGER NOT NULL DEFAULT 0,
    message    TEXT    NOT NULL, -- JSON
    finished   INTEGER NOT NULL DEFAULT 1,
    seq        INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX web_messages_order ON web_messages(created_at, id);
