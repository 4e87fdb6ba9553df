package store

import "context"

// Thread is what the memory holds of one thread, oldest first: its
// messages, its alert and the commands its turns ran.
func (m *Memory) Thread(ctx context.Context, sessionID int64) ([]MemoryHit, error) {
	rows, err := m.db.read.QueryContext(ctx, `SELECT `+hitCols+` FROM memory_docs d`+hitJoins+`
		WHERE coalesce(d.session_id, gs.id, 0) = ? ORDER BY d.at, d.id`, sessionID)
	if err != nil {
		return nil, wrap("memory of thread", err)
	}
	hits, err := scanHits(rows)
	return hits, wrap("memory of thread", err)
}
