package store

import (
	"context"
	"fmt"
)

// LimitMemory caps, softly, the memory SQLite holds in this process at
// bytes: the limit is the process's, not the connection's. Past it
// SQLite frees cached pages before it allocates. Each of the pool's nine
// connections may otherwise cache 2 MiB of pages (cache_size's default),
// which as the database grows is up to 18 MiB of the bot's resident set
// for pages the operating system caches anyway (issue 28: the bot's RSS
// grew with the number of threads).
func (s *Store) LimitMemory(ctx context.Context, bytes int64) error {
	_, err := s.write.ExecContext(ctx, fmt.Sprintf("PRAGMA soft_heap_limit = %d", bytes))
	return wrap("limit memory", err)
}
