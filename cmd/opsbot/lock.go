package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/opsbot/opsbot/store"
	"golang.org/x/sys/unix"
)

// lockStore takes the exclusive lock beside the database (DB.lock), so that
// a second opsbot on the same database refuses to start instead of taking
// the first one's running jobs and live streams for a crash's leftovers.
// The lock file holds the owner's pid; the lock ends with the process.
func lockStore(db string) (release func(), err error) {
	if err := store.CheckFolder(db); err != nil {
		return nil, usageError(err)
	}
	f, err := os.OpenFile(db+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, usageError(fmt.Errorf("cannot create the lock file %s.lock beside the database: %w", db, err))
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		b, _ := os.ReadFile(db + ".lock")
		f.Close()
		pid := strings.TrimSpace(string(b))
		if pid == "" {
			pid = "unknown"
		}
		return nil, usageError(fmt.Errorf("another opsbot (pid %s) is using %s; stop it or use another store.path", pid, db))
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() { f.Close() }, nil
}
