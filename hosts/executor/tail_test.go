package executor

import (
	"strings"
	"testing"
)

// Output past the limit keeps its head (the column headers, the first
// error) and its tail (how it ended).
func TestStreamKeepsHeadAndTail(t *testing.T) {
	t.Parallel()
	b := &tailBuffer{limit: 100}
	b.Write([]byte("HEADER first error\n"))
	for range 50 {
		b.Write([]byte("middle line\n"))
	}
	b.Write([]byte("LAST LINE\n"))
	s := b.String()
	if !strings.HasPrefix(s, "HEADER first error") || !strings.HasSuffix(s, "LAST LINE\n") || !strings.Contains(s, "bytes of output cut here") {
		t.Errorf("kept %q", s)
	}
	if len(s) > 160 {
		t.Errorf("kept %d bytes for a limit of 100", len(s))
	}
}
