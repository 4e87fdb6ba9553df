-- What opsbot does once an approval is decided, kept beside the request so
-- that a restart between the card and the decision loses nothing: a chat
-- `run` to execute (the hosts its target resolved to, the command, its
-- directory, timeout and whether it runs as a background job), or an agent
-- turn to resume. done_at records that the decision was acted on — the
-- command run, or a message saying why not — exactly once.
CREATE TABLE approval_followups (
    approval_id TEXT    PRIMARY KEY REFERENCES approvals(id),
    session_id  INTEGER NOT NULL REFERENCES sessions(id),
    kind        TEXT    NOT NULL,              -- 'run' or 'agent'
    target      TEXT    NOT NULL DEFAULT '',
    hosts       TEXT    NOT NULL DEFAULT '[]', -- JSON list
    command     TEXT    NOT NULL DEFAULT '',
    cwd         TEXT    NOT NULL DEFAULT '',
    timeout_ms  INTEGER NOT NULL DEFAULT 0,
    background  INTEGER NOT NULL DEFAULT 0,
    requester   TEXT    NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL,
    done_at     INTEGER
);
CREATE INDEX approval_followups_open ON approval_followups(done_at);
