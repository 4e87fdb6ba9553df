-- Times are Unix milliseconds (UTC). JSON columns hold arrays or objects.

CREATE TABLE sessions (
    id         INTEGER PRIMARY KEY,
    platform   TEXT    NOT NULL,
    workspace  TEXT    NOT NULL DEFAULT '',
    channel    TEXT    NOT NULL,
    thread     TEXT    NOT NULL,
    cwd        TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (platform, channel, thread)
);

CREATE TABLE messages (
    session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    role       TEXT    NOT NULL,
    content    TEXT    NOT NULL, -- content blocks, JSON
    tokens     INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;

CREATE TABLE turns (
    id         INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    start_seq  INTEGER NOT NULL, -- the last message seq before the turn began
    status     TEXT    NOT NULL CHECK (status IN ('running','done','cancelled','failed','interrupted')),
    started_at INTEGER NOT NULL,
    ended_at   INTEGER
);
CREATE INDEX turns_session ON turns(session_id, id);

CREATE TABLE approvals (
    id          TEXT    PRIMARY KEY,
    hash        TEXT    NOT NULL,
    session_id  INTEGER REFERENCES sessions(id) ON DELETE SET NULL,
    platform    TEXT    NOT NULL DEFAULT '',
    channel     TEXT    NOT NULL DEFAULT '',
    host        TEXT    NOT NULL,
    command     TEXT    NOT NULL,
    cwd         TEXT    NOT NULL DEFAULT '',
    requester   TEXT    NOT NULL,
    reasons     TEXT    NOT NULL DEFAULT '[]',
    quorum      INTEGER NOT NULL DEFAULT 1 CHECK (quorum >= 1),
    state       TEXT    NOT NULL CHECK (state IN ('pending','approved','denied','expired')),
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    decided_at  INTEGER,
    decided_by  TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX approvals_pending ON approvals(state, expires_at);

CREATE TABLE votes (
    approval_id TEXT    NOT NULL REFERENCES approvals(id) ON DELETE CASCADE,
    voter       TEXT    NOT NULL,
    vote        TEXT    NOT NULL CHECK (vote IN ('approve','deny')),
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (approval_id, voter)
) WITHOUT ROWID;

CREATE TABLE jobs (
    id          INTEGER PRIMARY KEY,
    session_id  INTEGER REFERENCES sessions(id) ON DELETE SET NULL,
    host        TEXT    NOT NULL,
    command     TEXT    NOT NULL,
    requester   TEXT    NOT NULL DEFAULT '',
    state       TEXT    NOT NULL CHECK (state IN ('running','succeeded','failed','cancelled','interrupted')),
    exit_code   INTEGER,
    output_tail TEXT    NOT NULL DEFAULT '',
    started_at  INTEGER NOT NULL,
    ended_at    INTEGER
);
CREATE INDEX jobs_session ON jobs(session_id, id);
CREATE INDEX jobs_state ON jobs(state);

CREATE TABLE notifications (
    id           INTEGER PRIMARY KEY,
    job_id       INTEGER REFERENCES jobs(id) ON DELETE CASCADE,
    session_id   INTEGER REFERENCES sessions(id) ON DELETE CASCADE,
    text         TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    delivered_at INTEGER,
    injected_at  INTEGER
);
CREATE INDEX notifications_undelivered ON notifications(delivered_at) WHERE delivered_at IS NULL;
CREATE INDEX notifications_uninjected ON notifications(session_id) WHERE injected_at IS NULL;

CREATE TABLE check_runs (
    id         INTEGER PRIMARY KEY,
    schedule   TEXT    NOT NULL,
    started_at INTEGER NOT NULL,
    ended_at   INTEGER NOT NULL
);
CREATE INDEX check_runs_schedule ON check_runs(schedule, id);

CREATE TABLE check_results (
    run_id      INTEGER NOT NULL REFERENCES check_runs(id) ON DELETE CASCADE,
    host        TEXT    NOT NULL,
    check_name  TEXT    NOT NULL,
    ok          INTEGER NOT NULL,
    output      TEXT    NOT NULL DEFAULT '',
    duration_ms INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, host, check_name)
) WITHOUT ROWID;

CREATE TABLE audit (
    id      INTEGER PRIMARY KEY,
    at      INTEGER NOT NULL,
    actor   TEXT    NOT NULL,
    action  TEXT    NOT NULL,
    subject TEXT    NOT NULL,
    detail  TEXT    NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_subject ON audit(subject, id);
-- The audit trail is append-only: the database itself refuses edits.
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit BEGIN SELECT RAISE(ABORT, 'audit is append-only'); END;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit BEGIN SELECT RAISE(ABORT, 'audit is append-only'); END;

CREATE TABLE events_seen (
    platform TEXT    NOT NULL,
    event_id TEXT    NOT NULL,
    seen_at  INTEGER NOT NULL,
    PRIMARY KEY (platform, event_id)
) WITHOUT ROWID;

CREATE TABLE posted_messages (
    id         INTEGER PRIMARY KEY,
    platform   TEXT    NOT NULL,
    channel    TEXT    NOT NULL,
    thread     TEXT    NOT NULL DEFAULT '',
    message_id TEXT    NOT NULL,
    session_id INTEGER REFERENCES sessions(id) ON DELETE SET NULL,
    state      TEXT    NOT NULL CHECK (state IN ('streaming','final')),
    text       TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (platform, channel, message_id)
);
CREATE INDEX posted_streaming ON posted_messages(state) WHERE state = 'streaming';
