package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"github.com/mattn/go-sqlite3"
)

// ErrBackupExists is returned by Backup when the destination exists and
// overwriting was not asked for.
var ErrBackupExists = errors.New("store: the backup file exists")

// BackupReport is what a backup copied, read back from the copy.
type BackupReport struct {
	Path  string
	Size  int64
	Rows  []TableRows
	Pages int
}

// TableRows is the number of rows of one table.
type TableRows struct {
	Table string
	Rows  int64
}

// Backup copies the database of cfg to dest with SQLite's online backup
// (through the driver, one read transaction: a consistent snapshot while
// the bot goes on writing, as WAL lets a reader in beside a writer; the
// bot's lock file is not needed). The copy is written beside dest and
// renamed into place once PRAGMA integrity_check passes on it, so a
// failed backup leaves no partial file; it is a single file in rollback
// journal mode, ready to be copied off the machine. An existing dest is
// refused unless overwrite is set.
func Backup(ctx context.Context, cfg Config, dest string, overwrite bool) (BackupReport, error) {
	cfg = cfg.WithDefaults()
	if _, err := os.Stat(cfg.Path); err != nil {
		return BackupReport{}, fmt.Errorf("%w at %s: %w", ErrNoDatabase, cfg.Path, err)
	}
	if _, err := os.Lstat(dest); err == nil && !overwrite {
		return BackupReport{}, fmt.Errorf("%w: %s", ErrBackupExists, dest)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".*.partial")
	if err != nil {
		return BackupReport{}, fmt.Errorf("store: backup: %w", err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	if err := copyDatabase(ctx, cfg, tmp.Name()); err != nil {
		return BackupReport{}, err
	}
	rep, err := verifyCopy(ctx, tmp.Name())
	if err != nil {
		return BackupReport{}, err
	}
	if err := os.Rename(tmp.Name(), dest); err != nil {
		return BackupReport{}, fmt.Errorf("store: backup: %w", err)
	}
	rep.Path = dest
	return rep, nil
}

// copyDatabase runs the online backup from cfg's database into the empty
// file dest, then turns the copy's journal mode to DELETE so it is one
// self-contained file.
func copyDatabase(ctx context.Context, cfg Config, dest string) error {
	src, err := sql.Open("sqlite3", roDSN(readDSN(cfg)))
	if err != nil {
		return fmt.Errorf("store: backup: %w", err)
	}
	defer src.Close()
	dst, err := sql.Open("sqlite3", "file:"+(&url.URL{Path: dest}).EscapedPath())
	if err != nil {
		return fmt.Errorf("store: backup: %w", err)
	}
	defer dst.Close()
	if err := withRaw(ctx, src, func(s *sqlite3.SQLiteConn) error {
		return withRaw(ctx, dst, func(d *sqlite3.SQLiteConn) error { return step(d, s) })
	}); err != nil {
		return fmt.Errorf("store: backup %s: %w", cfg.Path, err)
	}
	if _, err := dst.ExecContext(ctx, "PRAGMA journal_mode = DELETE"); err != nil {
		return fmt.Errorf("store: backup: %w", err)
	}
	return nil
}

// step copies every page of src into dst in one step: one read
// transaction on src, so the copy is a snapshot even while others write.
func step(dst, src *sqlite3.SQLiteConn) error {
	b, err := dst.Backup("main", src, "main")
	if err != nil {
		return err
	}
	done, err := b.Step(-1)
	if err == nil && !done {
		err = errors.New("the backup did not finish in one step")
	}
	return errors.Join(err, b.Finish())
}

// withRaw calls fn with the driver's connection under one of db's.
func withRaw(ctx context.Context, db *sql.DB, fn func(*sqlite3.SQLiteConn) error) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*sqlite3.SQLiteConn)
		if !ok {
			return fmt.Errorf("not a SQLite connection: %T", dc)
		}
		return fn(c)
	})
}

// verifyCopy checks the copy's integrity and counts its rows.
func verifyCopy(ctx context.Context, path string) (BackupReport, error) {
	db, err := sql.Open("sqlite3", roDSN("file:"+(&url.URL{Path: path}).EscapedPath()+"?_foreign_keys=on"))
	if err != nil {
		return BackupReport{}, fmt.Errorf("store: verify backup: %w", err)
	}
	defer db.Close()
	var check string
	if err := db.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&check); err != nil {
		return BackupReport{}, fmt.Errorf("store: verify backup: %w", err)
	}
	if check != "ok" {
		return BackupReport{}, fmt.Errorf("store: verify backup: integrity_check says %q", check)
	}
	rep := BackupReport{}
	if err := db.QueryRowContext(ctx, "PRAGMA page_count").Scan(&rep.Pages); err != nil {
		return rep, fmt.Errorf("store: verify backup: %w", err)
	}
	if rep.Rows, err = countRows(ctx, db); err != nil {
		return rep, fmt.Errorf("store: verify backup: %w", err)
	}
	st, err := os.Stat(path)
	if err != nil {
		return rep, fmt.Errorf("store: verify backup: %w", err)
	}
	rep.Size = st.Size()
	return rep, nil
}

// countRows counts the rows of every table of db, by name.
func countRows(ctx context.Context, db *sql.DB) ([]TableRows, error) {
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, err
		}
		names = append(names, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]TableRows, 0, len(names))
	for _, n := range names {
		t := TableRows{Table: n}
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM "`+n+`"`).Scan(&t.Rows); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}
