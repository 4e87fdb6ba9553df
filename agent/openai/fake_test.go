package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsbot/opsbot/agent"
)

// testKey is the API key the tests use; no error may contain it.
const testKey = "sk-proj-TESTKEY-do-not-leak-0123456789abcd"

// reply is one scripted answer of the fake API.
type reply struct {
	status   int               // 0: 200 with an SSE body
	header   map[string]string // extra response headers
	body     string            // the body of a non-200 answer
	sse      string            // a testdata file replayed as the SSE body
	raw      []byte            // an SSE body given directly (benchmarks)
	cutAfter int               // >0: drop the connection after this many SSE events
	// holdAfter >0: after this many SSE events, wait for the client to go.
	holdAfter int
}

// received is one request the fake got.
type received struct {
	path   string
	header http.Header
	body   map[string]any
}

// fakeAPI is an httptest server speaking the chat completions wire format:
// it answers each request with the next scripted reply and records it.
type fakeAPI struct {
	t       testing.TB
	srv     *httptest.Server
	mu      sync.Mutex
	replies []reply
	got     []received
}

// newFake starts a fake that answers with replies, in order.
func newFake(t testing.TB, replies ...reply) *fakeAPI {
	f := &fakeAPI{t: t, replies: replies}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var decoded map[string]any
	if err := json.Unmarshal(body, &decoded); err != nil {
		f.t.Errorf("fake: request body is not JSON: %v", err)
	}
	f.mu.Lock()
	f.got = append(f.got, received{path: r.URL.Path, header: r.Header.Clone(), body: decoded})
	if len(f.replies) == 0 {
		f.mu.Unlock()
		f.t.Errorf("fake: unexpected request %d", len(f.got))
		http.Error(w, `{"error":{"message":"no reply scripted","type":"server_error"}}`, 500)
		return
	}
	rep := f.replies[0]
	if len(f.replies) > 1 || rep.raw == nil {
		f.replies = f.replies[1:]
	}
	f.mu.Unlock()
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	if rep.status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rep.status)
		_, _ = io.WriteString(w, rep.body)
		return
	}
	f.replay(r.Context(), w, rep)
}

// replay writes an SSE transcript event by event, flushing each, and drops
// the connection mid-stream when the reply says so.
func (f *fakeAPI) replay(ctx context.Context, w http.ResponseWriter, rep reply) {
	data := rep.raw
	if data == nil {
		data = readTestdata(f.t, rep.sse)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher := w.(http.Flusher)
	for i, ev := range bytes.SplitAfter(data, []byte("\n\n")) {
		if rep.cutAfter > 0 && i == rep.cutAfter {
			// Abort the handler: net/http closes the connection without
			// the final chunk, as a dropped connection looks to a client.
			panic(http.ErrAbortHandler)
		}
		if rep.holdAfter > 0 && i == rep.holdAfter {
			<-ctx.Done()
			return
		}
		_, _ = w.Write(ev)
		flusher.Flush()
	}
}

// requests returns what the fake received so far.
func (f *fakeAPI) requests() []received {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]received(nil), f.got...)
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("testdata: %v", err)
	}
	return b
}

// sleeps records the waits asked of the injected sleep.
type sleeps struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// newTestProvider builds a provider against f with a recording sleep.
func newTestProvider(t testing.TB, f *fakeAPI, opts ...Option) (*Provider, *sleeps) {
	t.Helper()
	s := &sleeps{}
	opts = append([]Option{WithSleep(s.sleep)}, opts...)
	p, err := New(Config{APIKey: testKey, BaseURL: f.srv.URL + "/v1", Model: "gpt-test-1", MaxTokens: 1024}, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p, s
}

// outcome is what a caller saw of one streamed response.
type outcome struct {
	texts []string
	calls []agent.Block
	usage *agent.Usage
	stop  agent.StopReason
	err   error
}

// text is the answer as the caller would have shown it.
func (o outcome) text() string { return strings.Join(o.texts, "") }

// collect drains a stream, checking that the sequence ends with exactly
// one EventStop or EventError and that nothing follows it.
func collect(t *testing.T, seq func(func(agent.StreamEvent) bool)) outcome {
	t.Helper()
	var o outcome
	ended := false
	for ev := range seq {
		if ended {
			t.Errorf("event %+v after the end of the stream", ev)
		}
		switch ev.Kind {
		case agent.EventText:
			o.texts = append(o.texts, ev.Text)
		case agent.EventToolCall:
			o.calls = append(o.calls, ev.ToolCall)
		case agent.EventUsage:
			u := ev.Usage
			o.usage = &u
		case agent.EventStop:
			o.stop, ended = ev.StopReason, true
		case agent.EventError:
			o.err, ended = ev.Err, true
		default:
			t.Errorf("unknown event kind %d", ev.Kind)
		}
	}
	if !ended {
		t.Errorf("the stream ended without EventStop or EventError")
	}
	return o
}

// jsonEqual compares two JSON documents by value.
func jsonEqual(t *testing.T, what string, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad expectation: %v", what, err)
	}
	g, _ := json.Marshal(got)
	var gv any
	_ = json.Unmarshal(g, &gv)
	if !reflect.DeepEqual(gv, w) {
		pg, _ := json.MarshalIndent(gv, "", "  ")
		pw, _ := json.MarshalIndent(w, "", "  ")
		t.Errorf("%s:\n got: %s\nwant: %s", what, pg, pw)
	}
}
