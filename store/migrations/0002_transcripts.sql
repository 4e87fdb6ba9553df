-- A compacted session's full transcript, kept when its history is replaced
-- by a summary.
CREATE TABLE transcripts (
    id          INTEGER PRIMARY KEY,
    session_id  INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    archived_at INTEGER NOT NULL,
    messages    TEXT    NOT NULL -- JSON array of {seq, role, content}
);
CREATE INDEX transcripts_session ON transcripts(session_id, id);
