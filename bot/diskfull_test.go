package bot

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// TestNothingRunsWhoseRowCouldNotBeWritten: on a database whose disk is
// full (a real tmpfs, filled), a command that needs an approval is not put
// up for one and does not run, and a background job does not start: their
// rows could not be written. The thread is told, in words. (The requests
// are on record before the disk fills: a full disk refuses new events at
// the inbox, TestEventTheDiskRefusesIsNotActedOn.)
func TestNothingRunsWhoseRowCouldNotBeWritten(t *testing.T) {
	t.Parallel()
	disk := filepath.Join(t.TempDir(), "disk")
	mountTmpfs(t, disk, "4m")
	h := newHarnessWith(t, botOptions{dbDir: disk})
	marks := t.TempDir()
	h.say("alice", "t1", "help") // the thread's session exists before the disk fills
	h.eventually("the help", h.has("t1", "run"))
	h.restart(botOptions{dbDir: disk, held: true})
	approve := filepath.Join(marks, "approved")
	h.say("alice", "t1", "run local touch "+approve)
	h.say("alice", "t1", "run --bg local uptime")
	fill(t, disk)
	h.bot.Start(t.Context())
	h.eventually("both refused", func() bool { return h.count("t1", "the disk is full") >= 2 })
	if _, _, ok := h.find("t1", "Approval needed"); ok {
		t.Errorf("an approval card was posted with no approval row behind it:%s", h.dump())
	}
	if _, err := os.Stat(approve); err == nil {
		t.Error("the command ran although its approval could not be written")
	}
	if _, _, ok := h.find("t1", "job 1"); ok {
		t.Errorf("a job started although its row could not be written:%s", h.dump())
	}
}

// mountTmpfs mounts a tmpfs of size at dir until the test ends (root
// only, as the tests run in CI).
func mountTmpfs(t *testing.T, dir, size string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		if testing.Short() {
			t.Skipf("needs root to mount a tmpfs (go test -short skips this; make test runs it as root): %v", err)
		}
		t.Fatalf("this test needs root to mount a small tmpfs it can fill (run the tests as root, as CI does): %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
}

// fill writes a file in dir until its filesystem has no space left.
func fill(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 64<<10)
	for {
		if _, err := f.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the disk: %v", err)
			}
			f.Write(block[:1])
			return
		}
	}
}
