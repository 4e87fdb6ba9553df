package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// inHome runs opsbot in a fresh folder with HOME at home, as a new user
// in a fresh clone does after `make run`, and returns its exit code,
// stdout and stderr.
func inHome(t *testing.T, home, dir string, args ...string) (int, string, string) {
	t.Helper()
	cmd := opsbot(t, dir, args...)
	cmd.Env = append(cmd.Env, "HOME="+home)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errb.String()
	case err != nil:
		t.Fatal(err)
	}
	return 0, out.String(), errb.String()
}

// makeRunDatabase makes the database `make run` keeps under home (its
// DATA_DIR default) and returns its path.
func makeRunDatabase(t *testing.T, home string) string {
	t.Helper()
	dataDir := filepath.Join(home, ".local", "state", "opsbot")
	if code, _, stderr := inHome(t, home, t.TempDir(), "migrate", "--data-dir", dataDir); code != 0 {
		t.Fatalf("migrate --data-dir %s: exit %d, %s", dataDir, code, stderr)
	}
	return filepath.Join(dataDir, "opsbot.db")
}

// After `make run`, a bare read command reads make run's database, says
// so, and creates nothing in the current folder.
func TestNuReadCommandsFindMakeRunDatabase(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := makeRunDatabase(t, home)
	for _, args := range [][]string{{"audit"}, {"approvals", "list"}, {"sessions", "list"}} {
		here := t.TempDir()
		code, _, stderr := inHome(t, home, here, args...)
		if code != 0 || !strings.Contains(stderr, db) {
			t.Errorf("%s after make run: exit %d, stderr %q; want 0, naming %s", args, code, stderr, db)
		}
		if _, err := os.Stat(filepath.Join(here, "opsbot.db")); err == nil {
			t.Errorf("%s created ./opsbot.db", args)
		}
	}
}

// A bare hosts exec after `make run` audits into make run's database,
// saying so, not into a new ./opsbot.db.
func TestNuHostsExecUsesMakeRunDatabase(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := makeRunDatabase(t, home)
	here := t.TempDir()
	code, _, stderr := inHome(t, home, here, "hosts", "exec", "local", "--", "true")
	if !strings.Contains(stderr, db) {
		t.Errorf("hosts exec after make run: exit %d, stderr %q; want it to name %s", code, stderr, db)
	}
	if _, err := os.Stat(filepath.Join(here, "opsbot.db")); err == nil {
		t.Error("hosts exec created ./opsbot.db beside make run's database")
	}
}

// With no database anywhere, a read command says where it looked and how
// to choose one, and creates none.
func TestNuReadCommandWithoutDatabaseSaysWhereItLooked(t *testing.T) {
	t.Parallel()
	home, here := t.TempDir(), t.TempDir()
	code, _, stderr := inHome(t, home, here, "audit")
	want := filepath.Join(home, ".local", "state", "opsbot", "opsbot.db")
	if code != 2 || !strings.Contains(stderr, filepath.Join(here, "opsbot.db")) || !strings.Contains(stderr, want) ||
		!strings.Contains(stderr, "--data-dir DIR") || !strings.Contains(stderr, "make run") {
		t.Errorf("audit, no database: exit %d, stderr %q; want 2 naming both places, make run and --data-dir", code, stderr)
	}
	for _, p := range []string{filepath.Join(here, "opsbot.db"), want} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("audit created %s", p)
		}
	}
}
