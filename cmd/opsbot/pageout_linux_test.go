package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/store"
)

// The advice reclaims the executable's resident read-only pages, and the
// process goes on working after it: SQLite (cgo, with the relocated RELRO
// segment that MADV_DONTNEED once wiped) opens, writes and reads a real
// file.
func TestReleaseStartupCodeDropsFilePagesAndKeepsWorking(t *testing.T) {
	before := rssFileKB(t)
	advised, err := releaseStartupCode()
	if err != nil {
		t.Fatalf("releaseStartupCode: %v", err)
	}
	after := rssFileKB(t)
	if advised == 0 || after >= before {
		t.Fatalf("advised %d bytes; RssFile %d kB before, %d kB after: want it lower", advised, before, after)
	}
	st, err := store.Open(t.Context(), store.Config{Path: filepath.Join(t.TempDir(), "opsbot.db")})
	if err != nil {
		t.Fatalf("open the store after the advice: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
}

func TestReadOnlyMappingOfTakesOnlyTheExecutablesReadOnlyMappings(t *testing.T) {
	for line, want := range map[string]bool{
		"00403000-01751000 r-xp 00003000 fe:00 10748936 /bin/opsbot": true,
		"01751000-030d2000 r--p 01351000 fe:00 10748936 /bin/opsbot": true,
		"030d5000-03174000 rw-p 02cd5000 fe:00 10748936 /bin/opsbot": false,
		"7f00000-7f01000 r-xp 00000000 fe:00 11 /lib/libc.so.6":      false,
		"03174000-051bc000 rw-p 00000000 00:00 0":                    false,
	} {
		if _, _, ok := readOnlyMappingOf(line, "/bin/opsbot"); ok != want {
			t.Errorf("%q: got %v, want %v", line, ok, want)
		}
	}
}

func rssFileKB(t *testing.T) int {
	t.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "RssFile:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}
