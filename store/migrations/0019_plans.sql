-- Plans (issue 31): a plan is approved once as an approval whose command
-- is the plan's canonical text; plans holds where it was asked and how
-- far opsbot got running it, plan_steps one row per step that started.
-- A step's row is written before its command runs, so a restart knows
-- which steps ran (and never runs one twice).
CREATE TABLE plans (
    approval_id      TEXT    PRIMARY KEY,
    session_id       INTEGER NOT NULL DEFAULT 0,
    platform         TEXT    NOT NULL,
    workspace        TEXT    NOT NULL DEFAULT '',
    channel          TEXT    NOT NULL,
    thread           TEXT    NOT NULL,
    requester        TEXT    NOT NULL,
    kind             TEXT    NOT NULL DEFAULT 'plan',
    parent           TEXT    NOT NULL DEFAULT '',
    state            TEXT    NOT NULL DEFAULT 'proposed',
    card_message     TEXT    NOT NULL DEFAULT '',
    created_at       INTEGER NOT NULL
);
CREATE INDEX plans_running ON plans(state) WHERE state = 'running';

CREATE TABLE plan_steps (
    approval_id TEXT    NOT NULL REFERENCES plans(approval_id),
    step        INTEGER NOT NULL,
    state       TEXT    NOT NULL DEFAULT 'started',
    exit_code   INTEGER,
    output      TEXT    NOT NULL DEFAULT '',
    started_at  INTEGER NOT NULL,
    ended_at    INTEGER,
    PRIMARY KEY (approval_id, step)
);
