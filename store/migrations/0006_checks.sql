-- Health checks: each result's judgement (status, the number read from the
-- output, why) and since when it has held, so the next run can say what
-- changed without reading older runs. check_posts holds the message each
-- schedule keeps per channel and day, edited to the latest summary, with
-- each run's details in its thread.
ALTER TABLE check_results ADD COLUMN status TEXT NOT NULL DEFAULT '';
ALTER TABLE check_results ADD COLUMN value REAL;
ALTER TABLE check_results ADD COLUMN detail TEXT NOT NULL DEFAULT '';
ALTER TABLE check_results ADD COLUMN since INTEGER;

CREATE TABLE check_posts (
    schedule   TEXT    NOT NULL,
    platform   TEXT    NOT NULL,
    channel    TEXT    NOT NULL,
    day        TEXT    NOT NULL, -- YYYY-MM-DD in the schedule's zone
    message_id TEXT    NOT NULL,
    thread     TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (schedule, platform, channel, day)
) WITHOUT ROWID;
