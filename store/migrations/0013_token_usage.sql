-- The model tokens each thread (session) spent per UTC day, as the
-- providers reported them: agent.budget.thread_day is held against it,
-- across turns and restarts. input counts every prompt token, cached the
-- part of them read from the provider's prompt cache.
CREATE TABLE token_usage (
    session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    day        TEXT    NOT NULL, -- YYYY-MM-DD, UTC
    input      INTEGER NOT NULL DEFAULT 0,
    cached     INTEGER NOT NULL DEFAULT 0,
    output     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (session_id, day)
);
