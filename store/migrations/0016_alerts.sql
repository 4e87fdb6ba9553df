-- Alerts in (issue 29). alert_deliveries holds every delivery a webhook
-- source sent, raw, written before the sender is answered 202; done_at
-- records that the bot acted on it (its group's thread posted or updated),
-- so a start-up acts on every row without it, in order, once. A sender's
-- delivery id (PagerDuty's X-Webhook-Id) is kept once: its retries are
-- not recorded twice.
CREATE TABLE alert_deliveries (
    id          INTEGER PRIMARY KEY,
    source      TEXT    NOT NULL,
    delivery_id TEXT    NOT NULL DEFAULT '',
    body        BLOB    NOT NULL,
    received_at INTEGER NOT NULL,
    done_at     INTEGER
);
CREATE UNIQUE INDEX alert_deliveries_once ON alert_deliveries(source, delivery_id) WHERE delivery_id != '';
CREATE INDEX alert_deliveries_open ON alert_deliveries(id) WHERE done_at IS NULL;

-- One row per alert group (Alertmanager's groupKey, a PagerDuty incident,
-- a generic dedupe key): its thread, the root message that summarises it,
-- and its state as the bot keeps it (JSON: the current alerts, the
-- investigation's summary).
CREATE TABLE alert_groups (
    source          TEXT    NOT NULL,
    group_key       TEXT    NOT NULL,
    platform        TEXT    NOT NULL,
    workspace       TEXT    NOT NULL DEFAULT '',
    channel         TEXT    NOT NULL,
    thread          TEXT    NOT NULL DEFAULT '',
    root_id         TEXT    NOT NULL DEFAULT '',
    status          TEXT    NOT NULL,
    state           TEXT    NOT NULL,
    started_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    resolved_at     INTEGER,
    investigated_at INTEGER,
    PRIMARY KEY (source, group_key)
);
