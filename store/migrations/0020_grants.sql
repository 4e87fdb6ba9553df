-- Scoped grants (issue 31, item 6): "Approve similar for 30 min in this
-- thread". A grant lets commands similar to its command (policy.Similar)
-- run in its thread, on hosts of its host set and in its directory,
-- without a new card, until expires_at or a revoke. number is the short
-- number people use in the thread (`approvals revoke 2`). Every use is an
-- audit row with subject "grant:ID".
CREATE TABLE grants (
    id          INTEGER PRIMARY KEY,
    session_id  INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    number      INTEGER NOT NULL,
    hosts       TEXT    NOT NULL,
    cwd         TEXT    NOT NULL DEFAULT '',
    command     TEXT    NOT NULL,
    granted_by  TEXT    NOT NULL,
    approval_id TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    revoked_at  INTEGER,
    revoked_by  TEXT    NOT NULL DEFAULT '',
    UNIQUE (session_id, number)
);
CREATE INDEX grants_active ON grants(session_id, expires_at) WHERE revoked_at IS NULL;
