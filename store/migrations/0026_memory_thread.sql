-- A command's thread, for incident memory, comes first from what its
-- audit row names: the session (an approved command's follow-up, a
-- plan's steps: they run after their turn ended) or the thread label (a
-- turn's commands, "platform/channel/thread"). Only a row that names
-- neither falls back to the turn running when it ended. Rows 0022 filed
-- with no thread are filed again the same way.
DROP TRIGGER IF EXISTS memory_command;
CREATE TRIGGER memory_command AFTER INSERT ON audit
WHEN NEW.action = 'command.end' AND NEW.actor != 'scheduler' AND json_valid(NEW.detail)
BEGIN
    INSERT INTO memory_docs (kind, session_id, audit_id, at, host, exit_code, text)
    VALUES ('command',
        coalesce(
            (SELECT s.id FROM sessions s WHERE s.id = json_extract(NEW.detail, '$.session_id')),
            (SELECT s.id FROM sessions s
             WHERE s.platform || '/' || s.channel || '/' || s.thread = json_extract(NEW.detail, '$.thread')),
            (SELECT t.session_id FROM turns t
             WHERE t.started_at <= NEW.at AND (t.ended_at IS NULL OR t.ended_at >= NEW.at - 1000)
             ORDER BY EXISTS (SELECT 1 FROM messages m WHERE m.session_id = t.session_id AND m.seq > t.start_seq
                              AND instr(m.content, json_extract(NEW.detail, '$.command')) > 0) DESC, t.id DESC
             LIMIT 1)),
        NEW.id, NEW.at,
        CASE WHEN NEW.subject LIKE 'host:%' THEN substr(NEW.subject, 6) ELSE NEW.subject END,
        json_extract(NEW.detail, '$.exit_code'),
        coalesce(json_extract(NEW.detail, '$.command'), ''));
END;

UPDATE memory_docs SET session_id = (
    SELECT coalesce(
        (SELECT s.id FROM sessions s WHERE s.id = json_extract(a.detail, '$.session_id')),
        (SELECT s.id FROM sessions s
         WHERE s.platform || '/' || s.channel || '/' || s.thread = json_extract(a.detail, '$.thread')))
    FROM audit a WHERE a.id = memory_docs.audit_id AND json_valid(a.detail))
WHERE kind = 'command' AND session_id IS NULL;
