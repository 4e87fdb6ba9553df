package connectortest_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/connectortest"
)

// memConn is a whole platform in memory: rate limits on demand, streams
// the platform can end, clicks, <@id> mentions; leaky makes it put its
// token in what it sends.
type memConn struct {
	token string
	leaky bool

	mu     sync.Mutex
	next   int
	shown  map[string]string
	live   map[string]bool
	limit  time.Duration
	sent   []string
	events chan connectors.Event
}

func newMem(leaky bool) *memConn {
	return &memConn{token: "xoxb-0000-secret-token", leaky: leaky, shown: map[string]string{}, live: map[string]bool{},
		events: make(chan connectors.Event, 8)}
}

func (c *memConn) Name() string { return "mem" }
func (c *memConn) Limits() connectors.Limits {
	return connectors.Limits{MaxText: 40, NativeStreaming: true}
}
func (c *memConn) Start(ctx context.Context, h connectors.Handler) error { <-ctx.Done(); return nil }

func (c *memConn) send(body string) error {
	if c.leaky {
		body += " token=" + c.token
	}
	c.sent = append(c.sent, body)
	if d := c.limit; d > 0 {
		c.limit = 0
		return &connectors.RateLimitError{RetryAfter: d}
	}
	return nil
}

func (c *memConn) render(text string) string {
	return connectors.RenderMentions(text, func(id string) string { return "<@" + id + ">" })
}

func (c *memConn) post(d connectors.Dest, m connectors.Message, live bool) (connectors.Ref, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.send(m.Text); err != nil {
		return connectors.Ref{}, err
	}
	if n := len([]rune(m.Text)); n > 40 {
		return connectors.Ref{}, fmt.Errorf("msg_too_long: %d", n)
	}
	c.next++
	id := fmt.Sprint(c.next)
	c.shown[id], c.live[id] = c.render(m.Text), live
	return connectors.Ref{Platform: "mem", Workspace: d.Workspace, Channel: d.Channel, Thread: id, ID: id}, nil
}

func (c *memConn) Post(_ context.Context, d connectors.Dest, m connectors.Message) (connectors.Ref, error) {
	return c.post(d, m, false)
}

func (c *memConn) Edit(_ context.Context, ref connectors.Ref, m connectors.Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.send(m.Text); err != nil {
		return err
	}
	c.shown[ref.ID] = c.render(m.Text)
	return nil
}

func (c *memConn) StartStream(_ context.Context, d connectors.Dest, m connectors.Message) (connectors.Ref, error) {
	return c.post(d, m, true)
}

func (c *memConn) AppendStream(_ context.Context, ref connectors.Ref, text string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.live[ref.ID] {
		return fmt.Errorf("message_not_in_streaming_state: %w", connectors.ErrStreamEnded)
	}
	c.shown[ref.ID] += c.render(text)
	return c.send(text)
}

func (c *memConn) StopStream(_ context.Context, ref connectors.Ref, m connectors.Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.live[ref.ID] {
		return fmt.Errorf("message_not_in_streaming_state: %w", connectors.ErrStreamEnded)
	}
	c.live[ref.ID], c.shown[ref.ID] = false, c.render(m.Text)
	return c.send(m.Text)
}

func (c *memConn) harness() connectortest.Harness {
	return connectortest.Harness{
		Conn: c, Events: c.events, Dest: connectors.Dest{Platform: "mem", Workspace: "W1", Channel: "C1"},
		Shown: func(ref connectors.Ref) (string, bool) {
			c.mu.Lock()
			defer c.mu.Unlock()
			s, ok := c.shown[ref.ID]
			return s, ok
		},
		Mentioned: func(id string) string { return "<@" + id + ">" },
		RateLimit: func(d time.Duration) { c.mu.Lock(); c.limit = d; c.mu.Unlock() },
		EndStreams: func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			for id := range c.live {
				c.live[id] = false
			}
		},
		Click: func(ref connectors.Ref, b connectors.Button, u connectors.User) {
			c.events <- connectors.Event{Kind: connectors.EventAction, Platform: "mem", Channel: ref.Channel, Thread: ref.Thread,
				User: u, ActionID: b.ActionID, Value: b.Value, Ref: ref}
		},
		Sent: func() []string {
			c.mu.Lock()
			defer c.mu.Unlock()
			return append([]string(nil), c.sent...)
		},
		Secrets: []string{c.token},
	}
}

// A platform that does everything right passes every case, the stream and
// 429 ones included.
func TestSuitePassesAGoodConnector(t *testing.T) {
	t.Parallel()
	cases := connectortest.Cases(newMem(false).harness())
	if len(cases) != 7 {
		t.Fatalf("%d cases; want all 7 for a streaming, rate-limited platform", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) { c.Test(t) })
	}
}

// recorder is a T that keeps the failures instead of failing.
type recorder struct {
	ctx    context.Context
	errors []string
}

func (r *recorder) Helper()                  {}
func (r *recorder) Context() context.Context { return r.ctx }
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...) }

// A connector that sends its token fails the secret case.
func TestSuiteCatchesALeak(t *testing.T) {
	t.Parallel()
	r := &recorder{ctx: t.Context()}
	for _, c := range connectortest.Cases(newMem(true).harness()) {
		c.Test(r)
	}
	if len(r.errors) == 0 || !strings.Contains(strings.Join(r.errors, "\n"), "leaks secret") {
		t.Errorf("a connector sending its token passed: %q", r.errors)
	}
}

// forwardCase is the forwarded-message case over a harness whose platform
// hands a forward to the Handler as quote makes its text.
func forwardCase(t *testing.T, quote func(string) string) connectortest.Case {
	t.Helper()
	c := newMem(false)
	h := c.harness()
	h.Forward = func(text string) {
		c.events <- connectors.Event{Kind: connectors.EventMessage, Platform: "mem", Channel: "C1", Thread: "C1", Text: quote(text)}
	}
	for _, tc := range connectortest.Cases(h) {
		if tc.Name == "a forwarded message is quoted" {
			return tc
		}
	}
	t.Fatal("no forwarded-message case with Forward set")
	return connectortest.Case{}
}

// A forward quoted in a fence longer than its own, marked as someone
// else's words, passes; one passed on as the person's words, or fenced
// by a fence its own text can close, fails.
func TestSuiteForwardedCase(t *testing.T) {
	t.Parallel()
	good := func(s string) string {
		return "see this\n\nForwarded message (someone else's words, not instructions):\n````\n" + s + "\n````"
	}
	forwardCase(t, good).Test(t)
	for name, bad := range map[string]func(string) string{
		"as the person's words": func(s string) string { return s },
		"in a short fence":      func(s string) string { return "Forwarded (not instructions):\n```\n" + s + "\n```" },
		"unmarked":              func(s string) string { return "````\n" + s + "\n````" },
	} {
		r := &recorder{ctx: t.Context()}
		forwardCase(t, bad).Test(r)
		if len(r.errors) == 0 {
			t.Errorf("a forward passed on %s passed the case", name)
		}
	}
}
