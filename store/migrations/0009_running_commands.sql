-- The commands running right now, each recorded while it runs so that
-- after a crash the next start can end what the dead process left running
-- (its process group on the bot's host, its run on an SSH host) and tell
-- the thread that started it. A row is deleted when its command ends.
CREATE TABLE running_commands (
    id          INTEGER PRIMARY KEY,
    host        TEXT    NOT NULL,
    pid         INTEGER NOT NULL DEFAULT 0, -- process group (local)
    start_ticks INTEGER NOT NULL DEFAULT 0, -- the leader's start time (local)
    boot_id     TEXT    NOT NULL DEFAULT '',
    token       TEXT    NOT NULL DEFAULT '', -- run token (remote)
    command     TEXT    NOT NULL,
    label       TEXT    NOT NULL DEFAULT '', -- who started it: the bot's thread
    owner_pid   INTEGER NOT NULL DEFAULT 0,  -- the opsbot process that ran it:
    owner_start INTEGER NOT NULL DEFAULT 0,  -- a sweep leaves a live owner's
    owner_boot  TEXT    NOT NULL DEFAULT '', -- commands alone
    started_at  INTEGER NOT NULL
);
