// Package storetest puts a real database into the troubles the store must
// survive, for the tests of the packages that use it.
package storetest

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// HoldReadLocks takes, on the SQLite database at path (in WAL mode, open
// by the store), the locks another program holds while it recovers the
// database's WAL after a crash: the checkpoint, recovery and every read
// lock of the -shm file. Until release is called,
// every read that needs the database's pages cannot start: SQLite
// retries for about 10 s and then fails with "locking protocol",
// whatever busy_timeout says. It is the stall of a recovery on a slow
// disk, or of a program frozen while it held them.
//
// The locks are open file description locks, which conflict with the
// POSIX locks SQLite takes even within this process, so no second
// process is needed.
func HoldReadLocks(path string) (release func(), err error) {
	f, err := os.OpenFile(path+"-shm", os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("open the database's shared memory: %w", err)
	}
	// WAL_CKPT_LOCK (1) to WAL_READ_LOCK(4) (7), after the 120-byte
	// index header: WAL_ALL_BUT_WRITE, which walIndexRecover holds.
	lock := unix.Flock_t{Type: unix.F_WRLCK, Start: 121, Len: 7}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lock); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock the database's shared memory: %w", err)
	}
	done := false
	return func() {
		if !done {
			done = true
			f.Close() // drops the open file description's locks
		}
	}, nil
}
