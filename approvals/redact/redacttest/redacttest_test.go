package redacttest

import (
	"fmt"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps what Errorf reports.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestAssertNoSecret(t *testing.T) {
	t.Parallel()
	rec := &recorder{TB: t}
	AssertNoSecret(rec, Secrets(), "clean text", "leaks "+GitHubToken+" here", "")
	if len(rec.errs) != 1 {
		t.Fatalf("got %d failures %q; want 1", len(rec.errs), rec.errs)
	}
	if strings.Contains(rec.errs[0], GitHubToken) || !strings.Contains(rec.errs[0], "output 1") {
		t.Errorf("failure %q should name the output and not print the secret", rec.errs[0])
	}
}

func TestChunksSplitEverySecret(t *testing.T) {
	t.Parallel()
	chunks := Chunks()
	if strings.Join(chunks, "") != Output() {
		t.Fatal("chunks do not add up to Output")
	}
	AssertNoSecret(t, Secrets(), chunks...)
}
