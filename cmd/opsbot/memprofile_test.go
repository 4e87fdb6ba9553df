package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --memprofile writes a heap profile pprof reads (gzipped protobuf), and
// a place it cannot write is named by the flag.
func TestWriteHeapProfile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "heap.pprof")
	if err := writeHeapProfile(path); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil || !bytes.HasPrefix(raw, []byte{0x1f, 0x8b}) {
		t.Fatalf("profile: %d bytes starting %x, %v; want a gzipped profile", len(raw), raw[:min(len(raw), 2)], err)
	}
	err = writeHeapProfile(filepath.Join(t.TempDir(), "missing", "heap.pprof"))
	if err == nil || !strings.Contains(err.Error(), "--memprofile") {
		t.Errorf("an unwritable path: %v; want an error naming --memprofile", err)
	}
}
