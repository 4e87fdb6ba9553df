package hosts_test

import (
	"strings"
	"testing"

	"github.com/opsbot/opsbot/hosts"
)

func TestCaptureKeepsHeadAndTail(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		limit     int
		writes    []string
		want      string
		truncated bool
	}{
		{"fits", 10, []string{"abc", "def"}, "abcdef", false},
		{"exactly", 6, []string{"abc", "def"}, "abcdef", false},
		{"one big write", 4, []string{"0123456789"}, "01\n[... opsbot: 6 bytes of output omitted ...]\n89", true},
		{"ring wraps", 4, []string{"01", "23", "45", "67", "8", "9"}, "01\n[... opsbot: 6 bytes of output omitted ...]\n89", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, result := hosts.NewCapture(tt.limit)
			for _, s := range tt.writes {
				w.Write([]byte(s))
			}
			got, truncated, _ := result()
			if string(got) != tt.want || truncated != tt.truncated {
				t.Errorf("got %q (truncated %v), want %q (%v)", got, truncated, tt.want, tt.truncated)
			}
		})
	}
}

func TestCaptureCutsOnRuneBoundaries(t *testing.T) {
	t.Parallel()
	w, result := hosts.NewCapture(5) // head 3 bytes, tail 2 bytes
	w.Write([]byte("ééé-ééé"))       // 2-byte runes: the head's third byte and the tail's first split a rune
	got, truncated, _ := result()
	head, tail, ok := strings.Cut(string(got), "\n[... opsbot: ")
	if !ok || !truncated {
		t.Fatalf("got %q, want a marker", got)
	}
	if head != "é" {
		t.Errorf("head %q, want one whole é", head)
	}
	if !strings.HasSuffix(tail, "]\né") {
		t.Errorf("tail %q, want one whole é", tail)
	}
}

func TestCaptureRetainsAtMostItsLimit(t *testing.T) {
	t.Parallel()
	w, result := hosts.NewCapture(1 << 10)
	chunk := []byte(strings.Repeat("x", 300))
	for range 10000 {
		w.Write(chunk)
	}
	_, _, retained := result()
	if retained > 2<<10 { // append's growth may round up, never beyond
		t.Errorf("retains %d bytes for a 1 KiB limit", retained)
	}
}
