package textcut

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// logOf is lines of filler around the given middle lines, size bytes or so.
func logOf(size int, middle ...string) string {
	var b strings.Builder
	b.WriteString("HEAD first line\n")
	i := 0
	for b.Len() < size/2 {
		fmt.Fprintf(&b, "%06d GET /health 200 in 3ms\n", i)
		i++
	}
	for _, m := range middle {
		b.WriteString(m + "\n")
	}
	for b.Len() < size {
		fmt.Fprintf(&b, "%06d GET /health 200 in 3ms\n", i)
		i++
	}
	b.WriteString("TAIL last line\n")
	return b.String()
}

// The lines that say what went wrong survive from the middle of a long
// log, with the head and the tail; the filler between them does not.
func TestKeepKeepsErrorLinesFromTheMiddle(t *testing.T) {
	t.Parallel()
	bad := []string{"2026-11-27 ERROR db: connection reset", "FATAL: could not bind :443", "panic: runtime error: index out of range",
		"Traceback (most recent call last):", "kernel: Out of memory: Killed process 4242 (java)", "oom-kill:constraint=CONSTRAINT_NONE",
		"nginx.service: Failed with result 'exit-code'.", "make: *** [all] Error 2", "process exited with exit status 137",
		"job FAILED after 3 tries", "systemd: main process exited, exit code=killed"}
	s := logOf(1_220_000, bad...)
	got := Keep(s, 48<<10, nil)
	for _, want := range append(bad, "HEAD first line", "TAIL last line") {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("lost %q", want)
		}
	}
	if len(got) > 48<<10+1024 {
		t.Errorf("kept %d bytes; want about %d", len(got), 48<<10)
	}
	dropped := int64(0)
	for l := range strings.SplitSeq(markerLines(got), "\n") {
		dropped += parseSize(t, l)
	}
	if want := int64(len(s) - len(got)); dropped < want-1000 || dropped > want+1000 {
		t.Errorf("the markers say %d bytes cut; want about %d:\n%s", dropped, want, markerLines(got))
	}
}

// The markers add up to what was dropped: kept bytes plus the bytes the
// markers name are the input's size.
func TestKeepMarkersAddUp(t *testing.T) {
	t.Parallel()
	s := logOf(200_000, "ERROR one", "ERROR two")
	got := Keep(s, 8000, nil)
	kept, dropped := 0, int64(0)
	for l := range strings.SplitAfterSeq(got, "\n") {
		if strings.HasPrefix(l, "[… ") {
			dropped += parseSize(t, l)
			continue
		}
		kept += len(l)
	}
	if total := int64(kept) + dropped; total < int64(len(s))-2000 || total > int64(len(s))+2000 {
		t.Errorf("kept %d + dropped %d = %d; want about %d (the sizes are rounded)", kept, dropped, total, len(s))
	}
}

func parseSize(t *testing.T, marker string) int64 {
	f := strings.Fields(strings.TrimPrefix(marker, "[… "))
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		t.Fatalf("marker %q", marker)
	}
	return int64(v * map[string]float64{"bytes": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9}[f[1]])
}

// Output a capture already cut counts at its true size: the capture's
// marker stands for 1.22 MB, so the marker says so, not the size of what
// the capture kept.
func TestKeepCountsWhatACaptureDropped(t *testing.T) {
	t.Parallel()
	upstream := regexp.MustCompile(`^…\[(\d+) bytes of output cut here\]…$`)
	gap := func(line string) (int64, bool) {
		m := upstream.FindStringSubmatch(line)
		if m == nil {
			return 0, false
		}
		n, _ := strconv.ParseInt(m[1], 10, 64)
		return n, true
	}
	s := logOf(64<<10, "…[1200000 bytes of output cut here]…")
	got := Keep(s, 48<<10, gap)
	if !strings.Contains(got, "[… 1.22 MB cut here …]") {
		t.Errorf("the marker does not say 1.22 MB (1.2 MB upstream, 16 KB here):\n%s", markerLines(got))
	}
}

func markerLines(s string) string {
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		if strings.HasPrefix(l, "[…") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// Whatever the input, the result is bounded, valid UTF-8 when the input
// is, and whole when it fits.
func TestKeepBounds(t *testing.T) {
	t.Parallel()
	manyErrors := strings.Repeat("ERROR "+strings.Repeat("é", 300)+"\n", 5000)
	oneLine := strings.Repeat("ü", 300_000)
	for name, s := range map[string]string{"many errors": manyErrors, "one long line": oneLine, "long error line": "x\n" + strings.Repeat("ERROR ", 100_000) + "\ny\n"} {
		got := Keep(s, 16<<10, nil)
		if len(got) > 16<<10+600 || !utf8.ValidString(got) || !strings.Contains(got, "cut here") {
			t.Errorf("%s: %d bytes, valid %v, marker %v", name, len(got), utf8.ValidString(got), strings.Contains(got, "cut here"))
		}
	}
	if s := "short\nERROR x\n"; Keep(s, 100, nil) != s {
		t.Error("text that fits was changed")
	}
}

func TestBytes(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{930: "930 bytes", 16426: "16.4 KB", 1_220_000: "1.22 MB", 3_500_000_000: "3.50 GB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q; want %q", n, got, want)
		}
	}
}
