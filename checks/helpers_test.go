package checks

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/hosts"
)

var bg = context.Background()

// TestStore is the checks' store in these tests: the real SQLite store.
type TestStore interface {
	RunStore
	PostStore
	// SetNow replaces the store's clock.
	SetNow(now func() time.Time)
	Close() error
}

// OpenTestStore opens the SQLite store at path. store imports checks for
// the rows it keeps, so a test in this package cannot import it:
// store_test.go, in checks_test, sets this at init.
var OpenTestStore func(path string) (TestStore, error)

// openStore opens a real SQLite store in the test's temp dir.
func openStore(t testing.TB) TestStore {
	t.Helper()
	s, err := OpenTestStore(filepath.Join(t.TempDir(), "opsbot.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// resolverFunc is a hand-written Resolver.
type resolverFunc func(target string) ([]hosts.Host, error)

func (f resolverFunc) Resolve(target string) ([]hosts.Host, error) { return f(target) }

// namedHosts resolves "group:all" (and any comma list of names) to hosts
// named by names.
func namedHosts(names ...string) Resolver {
	return resolverFunc(func(target string) ([]hosts.Host, error) {
		if target != "group:all" {
			var out []hosts.Host
			for n := range strings.SplitSeq(target, ",") {
				out = append(out, hosts.Host{Name: n})
			}
			return out, nil
		}
		out := make([]hosts.Host, len(names))
		for i, n := range names {
			out[i] = hosts.Host{Name: n}
		}
		return out, nil
	})
}

// hostNames are n host names web-01…
func hostNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("web-%02d", i+1)
	}
	return out
}

var allowAll = PolicyFunc(func(hosts.Host, string) (bool, string) { return true, "" })

// fakePoster is a hand-written Poster that records what was posted and
// edited; PostFunc, if set, runs first.
type fakePoster struct {
	mu       sync.Mutex
	max      int
	posts    []fakePost
	edits    []fakePost
	next     int
	PostFunc func(channel, thread string, m connectors.Message)
	// limited is how many more calls answer with a rate limit.
	limited int
}

// rateLimited answers with the platform's "slow down" while limited > 0.
func (p *fakePoster) rateLimited() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.limited > 0 {
		p.limited--
		return &connectors.RateLimitError{RetryAfter: 2 * time.Second}
	}
	return nil
}

type fakePost struct {
	Channel, Thread, ID string
	Msg                 connectors.Message
}

func (p *fakePoster) Limits() connectors.Limits { return connectors.Limits{MaxText: p.max} }

func (p *fakePoster) Post(_ context.Context, d connectors.Dest, m connectors.Message) (connectors.Ref, error) {
	channel, thread := d.Channel, d.Thread
	if p.PostFunc != nil {
		p.PostFunc(channel, thread, m)
	}
	if err := p.rateLimited(); err != nil {
		return connectors.Ref{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next++
	id := fmt.Sprintf("m%d", p.next)
	p.posts = append(p.posts, fakePost{channel, thread, id, m})
	return connectors.Ref{Platform: "fake", Channel: channel, Thread: thread, ID: id}, nil
}

func (p *fakePoster) Edit(_ context.Context, ref connectors.Ref, m connectors.Message) error {
	if err := p.rateLimited(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.edits = append(p.edits, fakePost{ref.Channel, ref.Thread, ref.ID, m})
	return nil
}

func (p *fakePoster) snapshot() (posts, edits []fakePost) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]fakePost(nil), p.posts...), append([]fakePost(nil), p.edits...)
}

// postersOf serves one poster as the platform "fake".
func postersOf(p Poster) Posters {
	return func(platform string) (Poster, bool) { return p, platform == "fake" }
}

// logBuffer is a slog destination tests can read.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(b, nil)) }

func ptr[T any](v T) *T { return &v }
