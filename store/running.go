package store

import (
	"context"
	"database/sql"
	"time"
)

// RunningCommand is a command recorded while it runs (see the migration
// 0009_running_commands): what a start-up sweep needs to end it after a
// crash, and to tell its thread.
type RunningCommand struct {
	ID      int64
	Host    string
	PID     int
	Start   uint64
	Boot    string
	Token   string
	Command string
	// Label says who started it (the bot's thread).
	Label string
	// OwnerPID, OwnerStart and OwnerBoot name the opsbot process that ran
	// it: a sweep leaves the commands of a live process alone.
	OwnerPID   int
	OwnerStart uint64
	OwnerBoot  string
	StartedAt  time.Time
	// Approval, when set, is the approval this run uses: AddRunning
	// closes its follow-up in the same transaction (the command started).
	// It is not kept with the row.
	Approval string
}

// AddRunning records a command that has started; RemoveRunning forgets it
// when it ends.
func (s *Jobs) AddRunning(ctx context.Context, c RunningCommand) (int64, error) {
	var id int64
	err := s.db.tx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `INSERT INTO running_commands (host, pid, start_ticks, boot_id, token, command, label,
			owner_pid, owner_start, owner_boot, started_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			c.Host, c.PID, int64(c.Start), c.Boot, c.Token, c.Command, c.Label,
			c.OwnerPID, int64(c.OwnerStart), c.OwnerBoot, s.db.now()).Scan(&id)
		if err != nil || c.Approval == "" {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE approval_followups SET done_at = ? WHERE approval_id = ? AND done_at IS NULL`, s.db.now(), c.Approval)
		return err
	})
	return id, wrap("record running command", err)
}

// RemoveRunning forgets a command that has ended.
func (s *Jobs) RemoveRunning(ctx context.Context, id int64) error {
	return wrap("forget running command", s.db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM running_commands WHERE id = ?`, id)
		return err
	}))
}

// RunningCommands lists the commands recorded as running, oldest first:
// at start-up, those a previous process left.
func (s *Jobs) RunningCommands(ctx context.Context) ([]RunningCommand, error) {
	rows, err := s.db.read.QueryContext(ctx, `SELECT id, host, pid, start_ticks, boot_id, token, command, label,
		owner_pid, owner_start, owner_boot, started_at FROM running_commands ORDER BY id`)
	if err != nil {
		return nil, wrap("running commands", err)
	}
	defer rows.Close()
	var out []RunningCommand
	for rows.Next() {
		var c RunningCommand
		var start, ownerStart, started int64
		if err := rows.Scan(&c.ID, &c.Host, &c.PID, &start, &c.Boot, &c.Token, &c.Command, &c.Label,
			&c.OwnerPID, &ownerStart, &c.OwnerBoot, &started); err != nil {
			return nil, wrap("running commands", err)
		}
		c.Start, c.OwnerStart, c.StartedAt = uint64(start), uint64(ownerStart), time.UnixMilli(started).UTC()
		out = append(out, c)
	}
	return out, wrap("running commands", rows.Err())
}
