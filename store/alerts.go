package store

import (
	"context"
	"database/sql"
	"time"
)

// Alerts is the alerts aggregate: webhook deliveries recorded before they
// are acknowledged, and the alert groups with their threads.
type Alerts struct{ db *Store }

// Alerts is the alerts aggregate of the database.
func (s *Store) Alerts() *Alerts { return &Alerts{db: s} }

// AlertDelivery is a delivery on record and not yet acted on.
type AlertDelivery struct {
	ID         int64
	Source     string
	Body       []byte
	ReceivedAt time.Time
}

// AlertGroup is an alert group's thread and state.
type AlertGroup struct {
	Source, Key                  string
	Platform, Workspace, Channel string
	Thread, RootID               string
	Status                       string
	State                        []byte
	StartedAt, UpdatedAt         time.Time
	ResolvedAt, InvestigatedAt   time.Time
}

// RecordDelivery keeps a delivery's raw body. A delivery id already on
// record for the source (a retry) keeps nothing and returns first false.
func (a *Alerts) RecordDelivery(ctx context.Context, source, deliveryID string, body []byte) (first bool, err error) {
	err = a.db.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO alert_deliveries (source, delivery_id, body, received_at) VALUES (?, ?, ?, ?)
			ON CONFLICT DO NOTHING`, source, deliveryID, body, a.db.now())
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		first = n == 1
		return err
	})
	return first, wrap("record alert delivery", err)
}

// OpenDeliveries lists up to limit deliveries not yet acted on, oldest
// first.
func (a *Alerts) OpenDeliveries(ctx context.Context, limit int) ([]AlertDelivery, error) {
	rows, err := a.db.read.QueryContext(ctx, `SELECT id, source, body, received_at FROM alert_deliveries
		WHERE done_at IS NULL ORDER BY id LIMIT ?`, limit)
	if err != nil {
		return nil, wrap("open alert deliveries", err)
	}
	defer rows.Close()
	var out []AlertDelivery
	for rows.Next() {
		var d AlertDelivery
		var at sql.NullInt64
		if err := rows.Scan(&d.ID, &d.Source, &d.Body, &at); err != nil {
			return nil, wrap("open alert deliveries", err)
		}
		d.ReceivedAt = fromMS(at)
		out = append(out, d)
	}
	return out, wrap("open alert deliveries", rows.Err())
}

// FinishDelivery records that a delivery was acted on.
func (a *Alerts) FinishDelivery(ctx context.Context, id int64) error {
	return wrap("finish alert delivery", a.db.tx(ctx, func(tx *sql.Tx) error {
		return finishDelivery(ctx, tx, id, a.db.now())
	}))
}

func finishDelivery(ctx context.Context, tx *sql.Tx, id, now int64) error {
	_, err := tx.ExecContext(ctx, `UPDATE alert_deliveries SET done_at = ? WHERE id = ? AND done_at IS NULL`, now, id)
	return err
}

// AlertGroup reads a group (ErrNotFound: none yet).
func (a *Alerts) AlertGroup(ctx context.Context, source, key string) (AlertGroup, error) {
	g := AlertGroup{Source: source, Key: key}
	var state string
	var started, updated, resolved, investigated sql.NullInt64
	err := a.db.read.QueryRowContext(ctx, `SELECT platform, workspace, channel, thread, root_id, status, state,
		started_at, updated_at, resolved_at, investigated_at FROM alert_groups WHERE source = ? AND group_key = ?`, source, key).
		Scan(&g.Platform, &g.Workspace, &g.Channel, &g.Thread, &g.RootID, &g.Status, &state, &started, &updated, &resolved, &investigated)
	if err != nil {
		return AlertGroup{}, wrap("alert group", err)
	}
	g.State = []byte(state)
	g.StartedAt, g.UpdatedAt, g.ResolvedAt, g.InvestigatedAt = fromMS(started), fromMS(updated), fromMS(resolved), fromMS(investigated)
	return g, nil
}

// SaveAlertGroup writes a group and, when delivery is not 0, records that
// delivery acted on, in one transaction: a crash leaves both or neither.
func (a *Alerts) SaveAlertGroup(ctx context.Context, g AlertGroup, delivery int64) error {
	return wrap("save alert group", a.db.tx(ctx, func(tx *sql.Tx) error {
		now := a.db.now()
		_, err := tx.ExecContext(ctx, `INSERT INTO alert_groups (source, group_key, platform, workspace, channel, thread, root_id,
			status, state, started_at, updated_at, resolved_at, investigated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (source, group_key) DO UPDATE SET platform = excluded.platform, workspace = excluded.workspace,
			channel = excluded.channel, thread = excluded.thread, root_id = excluded.root_id, status = excluded.status,
			state = excluded.state, updated_at = excluded.updated_at, resolved_at = excluded.resolved_at,
			investigated_at = excluded.investigated_at`,
			g.Source, g.Key, g.Platform, g.Workspace, g.Channel, g.Thread, g.RootID, g.Status, string(g.State),
			msOrNow(g.StartedAt, now), now, msOrNull(g.ResolvedAt), msOrNull(g.InvestigatedAt))
		if err != nil || delivery == 0 {
			return err
		}
		return finishDelivery(ctx, tx, delivery, now)
	}))
}

// FiringAlertGroups lists the groups still firing, for a start-up to
// settle what a previous run left under way in them.
func (a *Alerts) FiringAlertGroups(ctx context.Context) ([]AlertGroup, error) {
	rows, err := a.db.read.QueryContext(ctx, `SELECT source, group_key FROM alert_groups WHERE status = 'firing' ORDER BY updated_at`)
	if err != nil {
		return nil, wrap("firing alert groups", err)
	}
	var keys [][2]string
	for rows.Next() {
		var k [2]string
		if err := rows.Scan(&k[0], &k[1]); err != nil {
			rows.Close()
			return nil, wrap("firing alert groups", err)
		}
		keys = append(keys, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, wrap("firing alert groups", err)
	}
	out := make([]AlertGroup, 0, len(keys))
	for _, k := range keys {
		g, err := a.AlertGroup(ctx, k[0], k[1])
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

// AlertThreads counts the groups with a thread posted (for tests and
// reports).
func (a *Alerts) AlertThreads(ctx context.Context) (int, error) {
	var n int
	err := a.db.read.QueryRowContext(ctx, `SELECT count(*) FROM alert_groups WHERE root_id != ''`).Scan(&n)
	return n, wrap("alert threads", err)
}

func msOrNow(t time.Time, now int64) int64 {
	if t.IsZero() {
		return now
	}
	return t.UnixMilli()
}

func msOrNull(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMilli()
}

// ForgetAlertDeliveriesBefore drops the deliveries acted on before t (the
// ones still open are kept whatever their age: they are yet to be acted
// on). A sender's retry comes within minutes, so a delivery id is
// remembered long enough to drop it. It returns how many it dropped.
func (a *Alerts) ForgetAlertDeliveriesBefore(ctx context.Context, t time.Time) (int64, error) {
	var n int64
	err := a.db.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM alert_deliveries WHERE done_at IS NOT NULL AND done_at <= ?`, t.UnixMilli())
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, wrap("forget alert deliveries", err)
}
