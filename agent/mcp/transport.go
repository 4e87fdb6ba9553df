package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// conn is a live session and what ends it.
type conn struct {
	session *sdk.ClientSession
	close   func()
}

// dial starts or reaches the server and opens a session, within the
// server's time limit.
func (s *server) dial(ctx context.Context) (*conn, error) {
	client := sdk.NewClient(&sdk.Implementation{Name: "opsbot", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: s.listChanged,
		// opsbot offers the server nothing of its own: no roots,
		// no sampling, no elicitation.
		Capabilities: &sdk.ClientCapabilities{},
	})
	t, stop, stderr := s.transport()
	cctx, cancel := context.WithTimeout(ctx, s.patience())
	defer cancel()
	cs, err := client.Connect(cctx, t, nil)
	if err != nil {
		stop()
		why := words(err)
		if tail := strings.TrimSpace(stderr.String()); tail != "" {
			why += "; it said: " + s.opt.redact(tail)
		}
		return nil, fmt.Errorf("could not connect to %s: %s", s.where(), why)
	}
	return &conn{session: cs, close: func() {
		cs.Close()
		stop()
	}}, nil
}

// where is the server for people: its URL's host, or its command.
func (s *server) where() string {
	if s.cfg.Type == TypeHTTP {
		if u, err := url.Parse(s.cfg.URL); err == nil {
			return u.Host
		}
	}
	return s.cfg.Command
}

// transport is how to reach the server; stop ends what it started (a
// stdio server's process group), and stderr keeps the end of what a stdio
// server wrote there, for the reason it is down.
func (s *server) transport() (t sdk.Transport, stop func(), stderr *tailBuffer) {
	stderr = &tailBuffer{max: 2 << 10}
	if s.cfg.Type == TypeHTTP {
		hc := &http.Client{Transport: headers{h: s.cfg.Headers, next: http.DefaultTransport}}
		return &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: hc, MaxRetries: 1}, func() {}, stderr
	}
	cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
	cmd.Env = environment(s.cfg.Env)
	cmd.Stderr = stderr
	contain(cmd)
	return &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, func() { endGroup(cmd) }, stderr
}

// environment is a stdio server's whole environment: the config's env,
// and nothing of opsbot's (a nil Env would inherit it all).
func environment(env map[string]string) []string {
	out := []string{}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}

// headers adds the config's headers to every request to an http server.
type headers struct {
	h    map[string]string
	next http.RoundTripper
}

// RoundTrip sends r with the headers set.
func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.h {
		r.Header.Set(k, v)
	}
	return h.next.RoundTrip(r)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

// Write keeps the end of p.
func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = t.b[over:]
	}
	return len(p), nil
}

// String is what is kept.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// rawJSON passes canonical arguments to the SDK as they are.
type rawJSON = json.RawMessage
