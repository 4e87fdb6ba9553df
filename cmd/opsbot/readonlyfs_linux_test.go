//go:build linux

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRunOnAReadOnlyFilesystemSaysSo: `opsbot run` whose data folder is on
// a real read-only filesystem (a tmpfs mounted read-only, in a user and
// mount namespace of its own) refuses to start, saying the folder is on a
// read-only filesystem and what to do; SQLite's own words were "no such
// file or directory" (it retries a file it may not create read-only), and
// the lock file's were "open DIR/opsbot.db.lock: read-only file system".
func TestRunOnAReadOnlyFilesystemSaysSo(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", `mount -t tmpfs -o ro opsbot-ro "$1" && exec "$2" run --listen 127.0.0.1:0 --data-dir "$1"`,
		"sh", dir, os.Args[0])
	cmd.Env = append(os.Environ(), "OPSBOT_BE_MAIN=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("opsbot run on a read-only filesystem: %v, %s; want it to refuse", err, stderr.String())
	}
	got := stderr.String()
	want := "the folder " + dir + " of the database is on a read-only filesystem: remount it read-write, or set store.path (or --data-dir) to a writable folder"
	if ee.ExitCode() != 2 || !strings.Contains(got, want) {
		t.Errorf("exit %d, %q; want exit 2 saying %q", ee.ExitCode(), got, want)
	}
	for _, jargon := range []string{"no such file", "open /"} {
		if strings.Contains(got, jargon) {
			t.Errorf("says %q: %q", jargon, got)
		}
	}
}
