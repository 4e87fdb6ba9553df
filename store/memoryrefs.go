package store

import (
	"context"
	"database/sql"
	"strings"
	"time"
)

// OpsbotNote starts the text of a message opsbot itself wrote into a
// thread's record to start a turn (a plan's results, a background job's
// end): no person's words, and posted on no platform.
const OpsbotNote = "[opsbot note"

// webRefs maps each message of a web thread the memory holds (by seq) to
// the web chat message its text is in: a question to the person's
// message holding it, an answer to the bot's message holding it (or its
// first part, when the answer was posted in parts). The match is by
// text, never by position: a message whose text is in no web message
// has no id, and an opsbot note is a Note.
func (m *Memory) webRefs(ctx context.Context, sessionID int64) (map[int64]MessageRef, error) {
	docs, err := m.threadTexts(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	posts, err := m.webPosts(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	refs := make(map[int64]MessageRef, len(docs))
	for _, d := range docs {
		r := MessageRef{Platform: "web"}
		switch {
		case d.role == "user" && strings.HasPrefix(d.text, OpsbotNote):
			r.Note = true
		default:
			if p, ok := holding(posts, d); ok {
				r.ID, r.Author = p.id, p.user
			}
		}
		refs[d.seq] = r
	}
	return refs, nil
}

// textRow is a message of a thread (a memory doc) or a web chat post,
// with its text folded onto one line.
type textRow struct {
	seq      int64
	id, user string
	role     string // "user" or "assistant"; a post's is its author's side
	text     string
	at       time.Time
}

func (m *Memory) threadTexts(ctx context.Context, sessionID int64) ([]textRow, error) {
	return m.textRows(ctx, "thread texts", `SELECT seq, '', '', role, text, at FROM memory_docs
		WHERE session_id = ? AND kind = 'message' ORDER BY at, id`, sessionID)
}

func (m *Memory) webPosts(ctx context.Context, sessionID int64) ([]textRow, error) {
	return m.textRows(ctx, "web posts", `SELECT 0, w.id, w.user, CASE WHEN w.bot = 1 THEN 'assistant' ELSE 'user' END,
			coalesce(json_extract(w.message, '$.text'), ''), w.created_at
		FROM web_messages w JOIN sessions s ON s.platform = 'web' AND s.channel = w.channel AND s.thread = w.thread
		WHERE s.id = ? AND json_valid(w.message) ORDER BY CAST(substr(w.id, 2) AS INTEGER)`, sessionID)
}

func (m *Memory) textRows(ctx context.Context, what, query string, args ...any) ([]textRow, error) {
	rows, err := m.db.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, wrap(what, err)
	}
	defer rows.Close()
	var out []textRow
	for rows.Next() {
		var r textRow
		var at sql.NullInt64
		if err := rows.Scan(&r.seq, &r.id, &r.user, &r.role, &r.text, &at); err != nil {
			return nil, wrap(what, err)
		}
		r.text, r.at = strings.Join(strings.Fields(r.text), " "), fromMS(at)
		out = append(out, r)
	}
	return out, wrap(what, rows.Err())
}

// holding is the post of d's side whose text best holds d's: the same
// text, then a post holding it ("@opsbot " and the question; an answer
// and a line under it), then the first part of an answer posted in
// parts; among equals, the one nearest d in time.
func holding(posts []textRow, d textRow) (textRow, bool) {
	var best textRow
	bestScore := 0
	for _, p := range posts {
		s := matchScore(p.text, d.text)
		if p.role != d.role || s == 0 {
			continue
		}
		if s > bestScore || s == bestScore && distance(p.at, d.at) < distance(best.at, d.at) {
			best, bestScore = p, s
		}
	}
	return best, bestScore > 0
}

// matchScore is how surely post holds the text of doc: 3 the same, 2
// post holds all of it, 1 doc starts with post (its first part); 0
// not at all.
func matchScore(post, doc string) int {
	switch {
	case post == "" || doc == "":
		return 0
	case post == doc:
		return 3
	case strings.Contains(post, doc):
		return 2
	case len(post) >= 16 && strings.HasPrefix(doc, post):
		return 1
	}
	return 0
}

func distance(a, b time.Time) time.Duration {
	if d := a.Sub(b); d >= 0 {
		return d
	}
	return b.Sub(a)
}
