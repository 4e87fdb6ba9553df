package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"math"
	"strings"

	"github.com/opsbot/opsbot/connectors/web/archive"
)

// Web is the web chat's aggregate: its messages, the post requests that
// make a retried post idempotent, and its reserved sequence numbers. It is
// the web connector's archive (connectors/web/archive).
type Web struct{ db *Store }

var (
	_ archive.Archive       = (*Web)(nil)
	_ archive.SeqKeeper     = (*Web)(nil)
	_ archive.RequestKeeper = (*Web)(nil)
	_ archive.ChangeLister  = (*Web)(nil)
	_ archive.PeopleLister  = (*Web)(nil)
)

// Save stores a message's latest state (an upsert by id); an
// older state (lower seq) never replaces a newer one.
func (s *Web) Save(ctx context.Context, m archive.Message) error {
	return wrap("save web message", s.db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO web_messages (id, channel, thread, user, bot, message, finished, seq, created_at, updated_at,
				request_key, request_digest, for_bot)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET message = excluded.message, finished = excluded.finished, seq = excluded.seq,
				updated_at = excluded.updated_at WHERE excluded.seq >= web_messages.seq`,
			m.ID, m.Channel, m.Thread, m.User, m.Bot, string(m.Message), m.Finished, int64(m.Seq), m.Created.UnixMilli(), m.Updated.UnixMilli(),
			m.Request.Key, m.Request.Digest, m.Request.ForBot)
		return err
	}))
}

// WebMessages returns every web chat message, oldest first.
func (s *Web) WebMessages(ctx context.Context) ([]archive.Message, error) {
	rows, err := s.db.read.QueryContext(ctx, `SELECT id, channel, thread, user, bot, message, finished, seq, created_at, updated_at
		FROM web_messages ORDER BY created_at, id`)
	if err != nil {
		return nil, wrap("web messages", err)
	}
	defer rows.Close()
	var out []archive.Message
	for rows.Next() {
		var m archive.Message
		var msg string
		var seq int64
		var created, updated sql.NullInt64
		if err := rows.Scan(&m.ID, &m.Channel, &m.Thread, &m.User, &m.Bot, &msg, &m.Finished, &seq, &created, &updated); err != nil {
			return nil, wrap("web messages", err)
		}
		m.Message, m.Seq, m.Created, m.Updated = json.RawMessage(msg), uint64(seq), fromMS(created), fromMS(updated)
		out = append(out, m)
	}
	return out, wrap("web messages", rows.Err())
}

// People lists the names of the people who posted in the web chat,
// each once, in the order they first posted (the bot left out).
func (s *Web) People(ctx context.Context) ([]string, error) {
	rows, err := s.db.read.QueryContext(ctx, `SELECT user FROM web_messages WHERE bot = 0
		GROUP BY user ORDER BY min(CAST(substr(id, 2) AS INTEGER))`)
	if err != nil {
		return nil, wrap("web people", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, wrap("web people", err)
		}
		out = append(out, name)
	}
	return out, wrap("web people", rows.Err())
}

const webColumns = `id, channel, thread, user, bot, message, finished, seq, created_at, updated_at`

// webNumber is the number in a message id "m<n>": the order of posting.
const webNumber = `CAST(substr(id, 2) AS INTEGER)`

// Threads sums up every thread; Mentioned is set where a person's
// message contains needle (matched without regard to ASCII case).
func (s *Web) Threads(ctx context.Context, needle string) ([]archive.Thread, error) {
	rows, err := s.db.read.QueryContext(ctx, `SELECT thread, MIN(channel), COUNT(*) - 1, MAX(seq), MAX(updated_at), MAX(`+webNumber+`),
			MAX(bot), MAX(bot = 0 AND instr(lower(message), lower(?)) > 0)
		FROM web_messages GROUP BY thread`, needle)
	if err != nil {
		return nil, wrap("web threads", err)
	}
	defer rows.Close()
	var out []archive.Thread
	for rows.Next() {
		var t archive.Thread
		var seq, last int64
		var updated sql.NullInt64
		if err := rows.Scan(&t.ID, &t.Channel, &t.Replies, &seq, &updated, &last, &t.HasBot, &t.Mentioned); err != nil {
			return nil, wrap("web threads", err)
		}
		t.Seq, t.LastID, t.Updated = uint64(seq), uint64(last), fromMS(updated)
		out = append(out, t)
	}
	return out, wrap("web threads", rows.Err())
}

// Messages returns the messages with these ids (those that exist,
// in no particular order).
func (s *Web) Messages(ctx context.Context, ids []string) ([]archive.Message, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return s.webQuery(ctx, "web messages by id", `SELECT `+webColumns+` FROM web_messages WHERE id IN (?`+strings.Repeat(",?", len(ids)-1)+`)`, args...)
}

// ThreadMessages returns up to limit messages of a thread posted before
// message number before (0: the newest), newest first.
func (s *Web) ThreadMessages(ctx context.Context, thread string, before uint64, limit int) ([]archive.Message, error) {
	if before == 0 {
		before = math.MaxInt64
	}
	return s.webQuery(ctx, "web thread messages", `SELECT `+webColumns+` FROM web_messages
		WHERE thread = ? AND `+webNumber+` < ? ORDER BY `+webNumber+` DESC LIMIT ?`, thread, int64(before), limit)
}

// Changed returns up to limit messages whose latest change has
// after < seq <= upTo, in seq order, of one channel and one thread ("":
// any).
func (s *Web) Changed(ctx context.Context, after, upTo uint64, channel, thread string, limit int) ([]archive.Message, error) {
	return s.webQuery(ctx, "web messages changed", `SELECT `+webColumns+` FROM web_messages
		WHERE seq > ? AND seq <= ? AND (? = '' OR channel = ?) AND (? = '' OR thread = ?) ORDER BY seq LIMIT ?`,
		int64(after), int64(upTo), channel, channel, thread, thread, limit)
}

// ChangedIDs lists what Changed would return, ids and seqs
// only: a replay reads only the messages it has not framed already.
func (s *Web) ChangedIDs(ctx context.Context, after, upTo uint64, channel, thread string, limit int) ([]archive.Change, error) {
	rows, err := s.db.read.QueryContext(ctx, `SELECT id, seq FROM web_messages
		WHERE seq > ? AND seq <= ? AND (? = '' OR channel = ?) AND (? = '' OR thread = ?) ORDER BY seq LIMIT ?`,
		int64(after), int64(upTo), channel, channel, thread, thread, limit)
	if err != nil {
		return nil, wrap("web changes", err)
	}
	defer rows.Close()
	var out []archive.Change
	for rows.Next() {
		var c archive.Change
		var seq int64
		if err := rows.Scan(&c.ID, &seq); err != nil {
			return nil, wrap("web changes", err)
		}
		c.Seq = uint64(seq)
		out = append(out, c)
	}
	return out, wrap("web changes", rows.Err())
}

// DeleteThreads deletes every message of these threads.
func (s *Web) DeleteThreads(ctx context.Context, threads []string) error {
	return wrap("delete web threads", s.db.tx(ctx, func(tx *sql.Tx) error {
		for len(threads) > 0 {
			n := min(len(threads), 500)
			args := make([]any, n)
			for i, id := range threads[:n] {
				args[i] = id
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM web_messages WHERE thread IN (?`+strings.Repeat(",?", n-1)+`)`, args...); err != nil {
				return err
			}
			threads = threads[n:]
		}
		return nil
	}))
}

func (s *Web) webQuery(ctx context.Context, what, query string, args ...any) ([]archive.Message, error) {
	rows, err := s.db.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, wrap(what, err)
	}
	defer rows.Close()
	var out []archive.Message
	for rows.Next() {
		m, err := scanWebMessage(rows)
		if err != nil {
			return nil, wrap(what, err)
		}
		out = append(out, m)
	}
	return out, wrap(what, rows.Err())
}

func scanWebMessage(rows *sql.Rows) (archive.Message, error) {
	var m archive.Message
	var msg string
	var seq int64
	var created, updated sql.NullInt64
	if err := rows.Scan(&m.ID, &m.Channel, &m.Thread, &m.User, &m.Bot, &msg, &m.Finished, &seq, &created, &updated); err != nil {
		return m, err
	}
	m.Message, m.Seq, m.Created, m.Updated = json.RawMessage(msg), uint64(seq), fromMS(created), fromMS(updated)
	return m, nil
}

// PostRequests returns the latest limit person's messages posted with
// a request key, newest first, with only their ids, places and requests:
// what the web chat remembers to answer retries after a restart.
func (s *Web) PostRequests(ctx context.Context, limit int) ([]archive.Message, error) {
	rows, err := s.db.read.QueryContext(ctx, `SELECT id, channel, thread, seq, request_key, request_digest, for_bot FROM web_messages
		WHERE request_key != '' ORDER BY created_at DESC, id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, wrap("web post requests", err)
	}
	defer rows.Close()
	var out []archive.Message
	for rows.Next() {
		var m archive.Message
		var seq int64
		if err := rows.Scan(&m.ID, &m.Channel, &m.Thread, &seq, &m.Request.Key, &m.Request.Digest, &m.Request.ForBot); err != nil {
			return nil, wrap("web post requests", err)
		}
		m.Seq = uint64(seq)
		out = append(out, m)
	}
	return out, wrap("web post requests", rows.Err())
}
