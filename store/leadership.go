package store

import (
	"context"
	"database/sql"
)

// SetGeneration records the leadership generation this process owns the
// database under (store/leader): every audit row written from now on
// carries it.
func (s *Store) SetGeneration(ctx context.Context, generation int64) error {
	return wrap("set the leadership generation", s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE leadership SET generation = ? WHERE id = 1`, generation)
		return err
	}))
}
