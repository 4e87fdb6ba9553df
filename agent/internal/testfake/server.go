package testfake

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
)

// Reply is one scripted answer of the fake API.
type Reply struct {
	Status   int               // 0: 200 with an SSE body
	Header   map[string]string // extra response headers
	Body     string            // the body of a non-200 answer
	SSE      string            // a testdata file replayed as the SSE body
	Raw      []byte            // an SSE body given directly (benchmarks)
	CutAfter int               // >0: drop the connection after this many SSE events
	// HoldAfter >0: after this many SSE events, wait for the client to go.
	HoldAfter int
	// HoldHeaders: send nothing, not even headers, until the client goes.
	HoldHeaders bool
	// Held, when set, is closed when the reply starts holding (HoldAfter,
	// HoldHeaders): a stalled server, for a test to act on.
	Held chan struct{}
	// Build, when set, makes the SSE body from the request's decoded
	// body: a scripted model that reads what it was sent.
	Build func(body map[string]any) []byte
	// Once: a Raw reply that is the last one is still used only once.
	Once bool
}

// Received is one request the fake got.
type Received struct {
	Path   string
	Header http.Header
	Body   map[string]any
}

// Server is an httptest server speaking a provider's wire format: it
// answers each request with the next scripted Reply and records it. The
// last Reply with a Raw body is kept and replayed for every later request,
// so a benchmark can loop on one script.
type Server struct {
	// URL is the base URL of the server, with no path.
	URL string
	// Rules, when set, checks each request body as the real API would
	// (AnthropicRules, OpenAIRules) and returns the error body it answers
	// with a 400, or "" for a valid request. Set it before the first call.
	Rules func(body map[string]any) string

	t       T
	noReply string
	mu      sync.Mutex
	replies []Reply
	got     []Received
}

// NewServer starts a fake that answers with replies, in order, and is closed
// when t ends. noReply is the error body, in the provider's wire format,
// sent (with a 500 and a test error) for a request nothing was scripted for.
func NewServer(t T, noReply string, replies ...Reply) *Server {
	f := &Server{t: t, noReply: noReply, replies: replies}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

func (f *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var decoded map[string]any
	if err := json.Unmarshal(body, &decoded); err != nil {
		f.t.Errorf("fake: request body is not JSON: %v", err)
	}
	f.mu.Lock()
	f.got = append(f.got, Received{Path: r.URL.Path, Header: r.Header.Clone(), Body: decoded})
	if len(f.replies) == 0 {
		f.mu.Unlock()
		f.t.Errorf("fake: unexpected request %d", len(f.got))
		http.Error(w, f.noReply, 500)
		return
	}
	if f.Rules != nil {
		if bad := f.Rules(decoded); bad != "" {
			f.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, bad)
			return
		}
	}
	rep := f.replies[0]
	if len(f.replies) > 1 || rep.Raw == nil || rep.Once {
		f.replies = f.replies[1:]
	}
	f.mu.Unlock()
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	if rep.Status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rep.Status)
		_, _ = io.WriteString(w, rep.Body)
		return
	}
	if rep.Build != nil {
		rep.Raw = rep.Build(decoded)
	}
	if rep.HoldHeaders {
		rep.hold(r.Context())
		return
	}
	f.replay(r.Context(), w, rep)
}

// replay writes an SSE transcript event by event, flushing each, and drops
// the connection mid-stream when the reply says so.
func (f *Server) replay(ctx context.Context, w http.ResponseWriter, rep Reply) {
	data := rep.Raw
	if data == nil {
		data = ReadTestdata(f.t, rep.SSE)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher := w.(http.Flusher)
	for i, ev := range bytes.SplitAfter(data, []byte("\n\n")) {
		if rep.CutAfter > 0 && i == rep.CutAfter {
			// Abort the handler: net/http closes the connection without
			// the final chunk, as a dropped connection looks to a client.
			panic(http.ErrAbortHandler)
		}
		if rep.HoldAfter > 0 && i == rep.HoldAfter {
			rep.hold(ctx)
			return
		}
		_, _ = w.Write(ev)
		flusher.Flush()
	}
}

// hold waits for the client to go, telling Held first.
func (rep Reply) hold(ctx context.Context) {
	if rep.Held != nil {
		close(rep.Held)
	}
	<-ctx.Done()
}

// Requests returns what the fake received so far.
func (f *Server) Requests() []Received {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Received(nil), f.got...)
}

// ReadTestdata returns the file name under the calling package's testdata
// directory, failing the test if it cannot be read.
func ReadTestdata(t T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("testdata: %v", err)
	}
	return b
}
