-- Slack's assistant threads (Agents & AI Apps): one row per thread a
-- person started (assistant_thread_started), so that the first question
-- titles it even after a restart in between, and so that the bot knows
-- where Slack shows its status (assistant.threads.setStatus) rather than
-- a reaction. titled is set once the first question titled the thread.
CREATE TABLE assistant_threads (
    platform   TEXT    NOT NULL,
    channel    TEXT    NOT NULL,
    thread     TEXT    NOT NULL,
    titled     INTEGER NOT NULL DEFAULT 0,
    started_at INTEGER NOT NULL, -- unix seconds
    PRIMARY KEY (platform, channel, thread)
);
