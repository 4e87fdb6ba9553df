-- Incident memory (issue 33): one row per thing worth recalling later, kept
-- in step by triggers on the tables it copies from. kind is
--   message  a person's question or the bot's answer (its text blocks),
--   command  a command that ran (an audit command.end row), with its host,
--            exit code and the thread whose turn was running it,
--   alert    an alert group's name and labels, in its thread.
-- The full-text index over text and host (memory_fts, FTS5) is made by the
-- store when it opens, and only when SQLite was built with FTS5 (the
-- sqlite_fts5 build tag): a migration cannot depend on it, as a build
-- without the tag must still open the database. Without it, recall is a
-- LIKE scan of this table.
CREATE TABLE memory_docs (
    id         INTEGER PRIMARY KEY,
    kind       TEXT    NOT NULL CHECK (kind IN ('message','command','alert')),
    session_id INTEGER REFERENCES sessions(id) ON DELETE CASCADE,
    seq        INTEGER, -- message: its seq in the session
    role       TEXT    NOT NULL DEFAULT '', -- message: user or assistant
    audit_id   INTEGER, -- command: its audit row (audit rows are never deleted)
    alert_ref  TEXT,    -- alert: source || char(31) || group_key
    at         INTEGER NOT NULL,
    host       TEXT    NOT NULL DEFAULT '',
    exit_code  INTEGER,
    text       TEXT    NOT NULL
);
CREATE INDEX memory_docs_session ON memory_docs(session_id, at);
CREATE INDEX memory_docs_alert ON memory_docs(alert_ref) WHERE alert_ref IS NOT NULL;

-- A question or an answer: the text blocks of a user or assistant
-- message. Tool calls and results are not indexed: the audit rows of the
-- commands are, with their hosts and exit codes.
CREATE TRIGGER memory_message AFTER INSERT ON messages
WHEN NEW.role IN ('user','assistant') AND json_valid(NEW.content) AND json_type(NEW.content) = 'array'
BEGIN
    INSERT INTO memory_docs (kind, session_id, seq, role, at, text)
    SELECT 'message', NEW.session_id, NEW.seq, NEW.role, NEW.created_at, t FROM (
        SELECT group_concat(json_extract(value, '$.text'), char(10)) AS t FROM json_each(NEW.content)
        WHERE json_extract(value, '$.type') = 'text' AND json_extract(value, '$.text') != ''
    ) WHERE t IS NOT NULL;
END;

-- A command that ran, by a person or the agent (the scheduler's health
-- checks are not incidents). Its thread is the session whose turn was
-- running when it ended, preferring one whose history names the command.
CREATE TRIGGER memory_command AFTER INSERT ON audit
WHEN NEW.action = 'command.end' AND NEW.actor != 'scheduler' AND json_valid(NEW.detail)
BEGIN
    INSERT INTO memory_docs (kind, session_id, audit_id, at, host, exit_code, text)
    VALUES ('command',
        (SELECT t.session_id FROM turns t
         WHERE t.started_at <= NEW.at AND (t.ended_at IS NULL OR t.ended_at >= NEW.at - 1000)
         ORDER BY EXISTS (SELECT 1 FROM messages m WHERE m.session_id = t.session_id AND m.seq > t.start_seq
                          AND instr(m.content, json_extract(NEW.detail, '$.command')) > 0) DESC, t.id DESC
         LIMIT 1),
        NEW.id, NEW.at,
        CASE WHEN NEW.subject LIKE 'host:%' THEN substr(NEW.subject, 6) ELSE NEW.subject END,
        json_extract(NEW.detail, '$.exit_code'),
        coalesce(json_extract(NEW.detail, '$.command'), ''));
END;

-- An alert group: its title and labels, in its thread's session (made
-- when the thread is known). Rewritten as the group changes.
CREATE TRIGGER memory_alert_insert AFTER INSERT ON alert_groups
WHEN json_valid(NEW.state)
BEGIN
    INSERT INTO memory_docs (kind, session_id, alert_ref, at, host, text)
    VALUES ('alert',
        (SELECT id FROM sessions WHERE platform = NEW.platform AND channel = NEW.channel AND thread = NEW.thread),
        NEW.source || char(31) || NEW.group_key, NEW.started_at,
        coalesce(json_extract(NEW.state, '$.labels.instance'), json_extract(NEW.state, '$.labels.host'), ''),
        trim(coalesce(json_extract(NEW.state, '$.title'), '') || char(10) ||
             coalesce((SELECT group_concat(key || '=' || value, ' ') FROM json_each(NEW.state, '$.labels')), '')));
END;
CREATE TRIGGER memory_alert_update AFTER UPDATE OF thread, state ON alert_groups
WHEN json_valid(NEW.state)
BEGIN
    DELETE FROM memory_docs WHERE alert_ref = OLD.source || char(31) || OLD.group_key;
    INSERT INTO memory_docs (kind, session_id, alert_ref, at, host, text)
    VALUES ('alert',
        (SELECT id FROM sessions WHERE platform = NEW.platform AND channel = NEW.channel AND thread = NEW.thread),
        NEW.source || char(31) || NEW.group_key, NEW.started_at,
        coalesce(json_extract(NEW.state, '$.labels.instance'), json_extract(NEW.state, '$.labels.host'), ''),
        trim(coalesce(json_extract(NEW.state, '$.title'), '') || char(10) ||
             coalesce((SELECT group_concat(key || '=' || value, ' ') FROM json_each(NEW.state, '$.labels')), '')));
END;

-- Retention: a web thread deleted past web.retention takes its memory
-- with it (a session's own deletion does, by the foreign key).
CREATE TRIGGER memory_web_retention AFTER DELETE ON web_messages
BEGIN
    DELETE FROM memory_docs WHERE session_id IN
        (SELECT id FROM sessions WHERE platform = 'web' AND channel = OLD.channel AND thread = OLD.thread);
END;
