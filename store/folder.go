package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// CheckFolder says, in words, why the folder of the database at path
// cannot hold it: missing, not a folder, on a read-only filesystem, or
// not writable by this user; nil when it can. SQLite itself, refused a
// new file on a read-only filesystem, falls back to opening it read-only
// and reports "no such file or directory".
func CheckFolder(path string) error {
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("the folder of %s does not exist: create %s or set store.path to a file in an existing folder", path, dir)
	}
	switch err := unix.Access(dir, unix.W_OK); {
	case errors.Is(err, unix.EROFS):
		return fmt.Errorf("the folder %s of the database is on a read-only filesystem: remount it read-write, or set store.path (or --data-dir) to a writable folder", dir)
	case errors.Is(err, unix.EACCES):
		return fmt.Errorf("the folder %s of the database cannot be written by this user: give it write permission, or set store.path (or --data-dir) to a writable folder", dir)
	}
	return nil
}
