package store

import (
	"context"
	"database/sql"
)

// AddRunningBatch records commands that have started, in one transaction
// (one fsync), each as AddRunning does, approval included; the ids come
// back in the order of cs. A fan-out's workers record their hosts'
// commands together this way (hosts/executor's ProcessLedger).
func (s *Jobs) AddRunningBatch(ctx context.Context, cs []RunningCommand) ([]int64, error) {
	ids := make([]int64, len(cs))
	err := s.db.tx(ctx, func(tx *sql.Tx) error {
		for i, c := range cs {
			if err := tx.QueryRowContext(ctx, `INSERT INTO running_commands (host, pid, start_ticks, boot_id, token, command, label,
				owner_pid, owner_start, owner_boot, started_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
				c.Host, c.PID, int64(c.Start), c.Boot, c.Token, c.Command, c.Label,
				c.OwnerPID, int64(c.OwnerStart), c.OwnerBoot, s.db.now()).Scan(&ids[i]); err != nil {
				return err
			}
			if c.Approval == "" {
				continue
			}
			if _, err := tx.ExecContext(ctx, `UPDATE approval_followups SET done_at = ? WHERE approval_id = ? AND done_at IS NULL`, s.db.now(), c.Approval); err != nil {
				return err
			}
		}
		return nil
	})
	return ids, wrap("record running commands", err)
}

// RemoveRunningBatch forgets commands that have ended, in one transaction.
func (s *Jobs) RemoveRunningBatch(ctx context.Context, ids []int64) error {
	return wrap("forget running commands", s.db.tx(ctx, func(tx *sql.Tx) error {
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, `DELETE FROM running_commands WHERE id = ?`, id); err != nil {
				return err
			}
		}
		return nil
	}))
}
