package web

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/connectors"
)

// wait bounds every wait for something asynchronous: a guard against a
// hung test, not a speed requirement.
const wait = 10 * time.Second

// recorder is a bot that records the events it gets.
type recorder struct{ events chan connectors.Event }

func (r *recorder) handle(_ context.Context, ev connectors.Event) error { r.events <- ev; return nil }

func (r *recorder) next(t *testing.T) connectors.Event {
	t.Helper()
	select {
	case ev := <-r.events:
		return ev
	case <-time.After(wait):
		t.Fatal("no event reached the bot")
	}
	return connectors.Event{}
}

func (r *recorder) none(t *testing.T) {
	t.Helper()
	select {
	case ev := <-r.events:
		t.Fatalf("the bot got an unexpected event %+v", ev)
	default:
	}
}

// started returns a connector on archive (nil: memory) whose bot is a
// recorder, running until the test ends.
func started(t *testing.T, cfg Config, archive Archive) (*Connector, *recorder) {
	t.Helper()
	c := unstarted(t, cfg, archive)
	rec := &recorder{events: make(chan connectors.Event, 64)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Start(ctx, rec.handle); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-c.Running():
	case <-done:
		t.Fatal("Start returned before it took the bot's Handler")
	}
	return c, rec
}

func unstarted(t *testing.T, cfg Config, archive Archive) *Connector {
	t.Helper()
	c, err := New(context.Background(), cfg, archive)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// call sends one request to h from a local client unless mod says
// otherwise; a body makes it a JSON POST.
func call(t *testing.T, h http.Handler, method, path, body string, mod ...func(*http.Request)) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.RemoteAddr = "127.0.0.1:40000"
	r.Host = "127.0.0.1:8080"
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	for _, m := range mod {
		m(r)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func decodeBody[T any](t *testing.T, w *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
		t.Fatalf("decode %q: %v", w.Body.String(), err)
	}
	return v
}

// say posts text as user and returns the answer.
func say(t *testing.T, h http.Handler, user, thread, text string) postResult {
	t.Helper()
	body, _ := json.Marshal(postRequest{Channel: "ops", Thread: thread, User: user, Text: text})
	w := call(t, h, "POST", "/api/messages", string(body))
	if w.Code != http.StatusCreated {
		t.Fatalf("post %q: %d %s", text, w.Code, w.Body)
	}
	return decodeBody[postResult](t, w)
}

// frame is one Server-Sent Event.
type frame struct{ id, event, data string }

// stream reads an event stream from a real server.
type stream struct {
	t      *testing.T
	frames chan frame
}

func openStream(t *testing.T, base, query string, header http.Header) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/events?"+query, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("open stream: %s", resp.Status)
	}
	s := &stream{t: t, frames: make(chan frame, 1024)}
	done := make(chan struct{})
	go func() { s.read(bufio.NewReader(resp.Body)); close(done) }()
	t.Cleanup(func() { cancel(); resp.Body.Close(); <-done })
	return s
}

func (s *stream) read(br *bufio.Reader) {
	defer close(s.frames)
	var f frame
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if f.event != "" || f.data != "" {
				s.frames <- f
			}
			f = frame{}
		case strings.HasPrefix(line, "id: "):
			f.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			f.event = line[7:]
		case strings.HasPrefix(line, "data: "):
			f.data = line[6:]
		}
	}
}

func (s *stream) next() frame {
	s.t.Helper()
	select {
	case f, ok := <-s.frames:
		if !ok {
			s.t.Fatal("the stream ended")
		}
		return f
	case <-time.After(wait):
		s.t.Fatal("nothing came on the stream")
	}
	return frame{}
}

// ended reports whether the stream closes (within the wait).
func (s *stream) ended() bool {
	for {
		select {
		case _, ok := <-s.frames:
			if !ok {
				return true
			}
		case <-time.After(wait):
			return false
		}
	}
}

// message reads the next frame, which must be a message update.
func (s *stream) message() messageView {
	s.t.Helper()
	f := s.next()
	if f.event != "message" {
		s.t.Fatalf("got %+v, want a message update", f)
	}
	var v messageView
	if err := json.Unmarshal([]byte(f.data), &v); err != nil {
		s.t.Fatal(err)
	}
	if f.id != jsonString(v.Seq) {
		s.t.Errorf("frame id %s, but seq %d", f.id, v.Seq)
	}
	return v
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// ready reads the stream's first frame and returns its seq.
func (s *stream) ready() uint64 {
	s.t.Helper()
	f := s.next()
	var v struct{ Seq uint64 }
	if f.event != "ready" || json.Unmarshal([]byte(f.data), &v) != nil {
		s.t.Fatalf("got %+v, want the ready event", f)
	}
	return v.Seq
}

// dest is a thread of a channel of the web chat.
func dest(channel, thread string) connectors.Dest {
	return connectors.Dest{Platform: Platform, Channel: channel, Thread: thread}
}

// finish stops the stream of ref with what it shows now.
func finish(ctx context.Context, c *Connector, ref connectors.Ref) error {
	v, err := c.hub.message(ctx, ref.ID)
	if err != nil {
		return err
	}
	return c.StopStream(ctx, ref, v.body.message())
}

// message is the neutral message a body shows.
func (b body) message() connectors.Message {
	m := connectors.Message{Text: b.Text, Context: b.Context}
	for _, f := range b.Fields {
		m.Fields = append(m.Fields, connectors.Field{Title: f.Title, Value: f.Value})
	}
	for _, bt := range b.Buttons {
		m.Buttons = append(m.Buttons, connectors.Button{ActionID: bt.ActionID, Value: bt.Value, Label: bt.Label, Style: connectors.ButtonStyle(bt.Style)})
	}
	return m
}
