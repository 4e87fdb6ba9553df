-- Counters that must never go backwards, whatever is deleted or lost:
-- web_seq is the highest sequence number the web chat has handed out or
-- reserved (its message ids are "m" and that number), so a restart never
-- reuses an id a client has seen. "probe" is written by Health to learn
-- whether writes work again after the disk refused one.
CREATE TABLE counters (
    name  TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
