-- What people said of an answer or an alert summary with its feedback
-- buttons (Slack's context_actions): one row per click, kept with the
-- turn it was about. Never shown to others as a vote; `opsbot stats`
-- counts them per day.
CREATE TABLE feedback (
    id        INTEGER PRIMARY KEY,
    platform  TEXT    NOT NULL,
    turn_id   TEXT    NOT NULL,
    user_id   TEXT    NOT NULL,
    value     TEXT    NOT NULL CHECK (value IN ('good', 'bad')),
    at        INTEGER NOT NULL -- unix seconds
);
CREATE INDEX feedback_at ON feedback (at);
