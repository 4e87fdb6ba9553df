package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/connectors"
)

func serve(t *testing.T, c *Connector) string {
	t.Helper()
	srv := httptest.NewServer(c.Handler())
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	return srv.URL
}

// Post, edits and Finish reach a thread's stream in order, each a whole
// message with a rising seq, finished only at the end.
func TestStreamOrderAndSeq(t *testing.T) {
	t.Parallel()
	c, _ := started(t, Config{}, nil)
	base := serve(t, c)
	root := say(t, c.Handler(), "alice", "", "@opsbot uptime")
	s := openStream(t, base, "thread="+root.Thread, nil)
	if seq := s.ready(); seq != root.Seq {
		t.Errorf("ready at seq %d, want %d", seq, root.Seq)
	}
	ctx := context.Background()
	ref, _ := c.StartStream(ctx, dest("ops", root.Thread), connectors.Message{Text: "up"})
	texts := []string{"up", "up 3", "up 3 days", "up 3 days, load 0.1"}
	for _, text := range texts[1:] {
		c.Edit(ctx, ref, connectors.Message{Text: text})
	}
	finish(ctx, c, ref)
	last := root.Seq
	for i, want := range append(texts, texts[len(texts)-1]) {
		m := s.message()
		finished := i == len(texts)
		if m.ID != ref.ID || m.Text != want || m.Finished != finished || m.Seq != last+1 {
			t.Errorf("update %d: %s %q finished=%v seq=%d, want %q finished=%v seq=%d", i, m.ID, m.Text, m.Finished, m.Seq, want, finished, last+1)
		}
		last = m.Seq
	}
}

// A stream scoped to a thread or a channel sees only its own; a stream of
// everything sees all, in seq order.
func TestStreamScopes(t *testing.T) {
	t.Parallel()
	c, _ := started(t, Config{Channels: []string{"ops", "dev"}}, nil)
	base := serve(t, c)
	a := say(t, c.Handler(), "alice", "", "in ops")
	thread := openStream(t, base, "thread="+a.Thread, nil)
	ops := openStream(t, base, "channel=ops", nil)
	all := openStream(t, base, "", nil)
	for _, s := range []*stream{thread, ops, all} {
		s.ready()
	}
	ctx := context.Background()
	c.StartStream(ctx, dest("dev", ""), connectors.Message{Text: "in dev"})
	c.StartStream(ctx, dest("ops", ""), connectors.Message{Text: "another ops thread"})
	c.StartStream(ctx, dest("ops", a.Thread), connectors.Message{Text: "reply"})
	if m := thread.message(); m.Text != "reply" {
		t.Errorf("the thread's stream got %q first", m.Text)
	}
	if m1, m2 := ops.message(), ops.message(); m1.Text != "another ops thread" || m2.Text != "reply" {
		t.Errorf("the channel's stream got %q, %q", m1.Text, m2.Text)
	}
	for _, want := range []string{"in dev", "another ops thread", "reply"} {
		if m := all.message(); m.Text != want {
			t.Errorf("the whole stream got %q, want %q", m.Text, want)
		}
	}
}

// A client that reconnects with Last-Event-ID (or ?since=) first gets the
// latest state of everything changed since, in seq order, then live
// updates: it loses nothing.
func TestStreamReplay(t *testing.T) {
	t.Parallel()
	c, _ := started(t, Config{}, nil)
	base := serve(t, c)
	ctx := context.Background()
	root := say(t, c.Handler(), "alice", "", "@opsbot df")
	s := openStream(t, base, "thread="+root.Thread, nil)
	s.ready()
	ref, _ := c.StartStream(ctx, dest("ops", root.Thread), connectors.Message{Text: "checking"})
	seen := s.message().Seq
	// The client drops here; meanwhile the answer grows and a reply comes.
	c.Edit(ctx, ref, connectors.Message{Text: "/ 91%"})
	c.StartStream(ctx, dest("ops", ""), connectors.Message{Text: "elsewhere"})
	bob := say(t, c.Handler(), "bob", root.Thread, "thanks")
	c.Edit(ctx, ref, connectors.Message{Text: "/ 91%, /var 40%"})
	finish(ctx, c, ref)

	latest := "/ 91%, /var 40%"
	for i, how := range []struct {
		query  string
		header http.Header
	}{
		{"thread=" + root.Thread, http.Header{"Last-Event-Id": {fmt.Sprint(seen)}}},
		{fmt.Sprintf("thread=%s&since=%d", root.Thread, seen), nil},
	} {
		r := openStream(t, base, how.query, how.header)
		r.ready()
		if m := r.message(); m.ID != bob.ID {
			t.Errorf("%v: replay starts with %s %q, want bob's reply (the older change)", how, m.ID, m.Text)
		}
		if m := r.message(); m.ID != ref.ID || m.Text != latest || !m.Finished {
			t.Errorf("%v: replay gives %+v, want the answer's latest state", how, m)
		}
		latest = fmt.Sprint("live ", i)
		c.Edit(ctx, ref, connectors.Message{Text: latest})
		if m := r.message(); m.Text != latest {
			t.Errorf("%v: after the replay got %q, want the live edit", how, m.Text)
		}
	}
	if w := call(t, c.Handler(), "GET", "/api/events?since=soon", ""); w.Code != http.StatusBadRequest {
		t.Errorf("since=soon: %d", w.Code)
	}
}

// When the connector stops, open streams end, so the server can shut down.
func TestStreamsEndWithStart(t *testing.T) {
	t.Parallel()
	c := unstarted(t, Config{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Start(ctx, func(context.Context, connectors.Event) error { return nil }); close(done) }()
	s := openStream(t, serve(t, c), "", nil)
	s.ready()
	cancel()
	<-done
	if !s.ended() {
		t.Error("the stream stayed open after Start returned")
	}
}

// A stream that falls too far behind is cut rather than allowed to stall
// the chat; its client reconnects and replays.
func TestSlowStreamIsCut(t *testing.T) {
	t.Parallel()
	c, _ := started(t, Config{}, nil)
	sub := &subscriber{}
	c.hub.subscribe(sub)
	ctx := context.Background()
	ref, _ := c.StartStream(ctx, dest("ops", ""), connectors.Message{Text: "x"})
	for i := range streamBuffer + 1 {
		c.Edit(ctx, ref, connectors.Message{Text: fmt.Sprint(i)})
	}
	n := 0
	for range sub.frames {
		n++
	}
	if n != streamBuffer {
		t.Errorf("the slow stream got %d frames before it was cut, want %d", n, streamBuffer)
	}
	if len(c.hub.subs) != 0 {
		t.Error("the cut stream is still subscribed")
	}
}

// ?until=finished ends the stream after the first finished message of the
// bot in its scope, live or replayed, so a script that follows a thread
// for its answer exits when the answer is complete.
func TestStreamUntilFinished(t *testing.T) {
	t.Parallel()
	c, _ := started(t, Config{}, nil)
	base := serve(t, c)
	ctx := context.Background()

	q := say(t, c.Handler(), "alice", "", "@opsbot uptime")
	live := openStream(t, base, "until=finished&thread="+q.Thread, nil)
	live.ready()
	other := say(t, c.Handler(), "bob", "", "@opsbot elsewhere")
	finish(ctx, c, mustPost(t, c, other.Thread, "another thread's answer"))
	say(t, c.Handler(), "alice", q.Thread, "a person's message is finished too")
	ref := mustPost(t, c, q.Thread, "up")
	c.Edit(ctx, ref, connectors.Message{Text: "up 3 days"})
	finish(ctx, c, ref)
	if m := live.message(); m.User != "alice" {
		t.Errorf("first update %+v, want alice's message", m)
	}
	for _, want := range []bool{false, false, true} {
		if m := live.message(); m.ID != ref.ID || m.Finished != want {
			t.Errorf("update %s finished=%v, want %s finished=%v", m.ID, m.Finished, ref.ID, want)
		}
	}
	if !live.ended() {
		t.Error("the stream stayed open after the answer was finished")
	}

	// The answer finished before the stream opened: the replay ends it.
	replayed := openStream(t, base, fmt.Sprintf("until=finished&thread=%s&since=%d", q.Thread, q.Seq), nil)
	replayed.ready()
	replayed.message() // alice's reply
	if m := replayed.message(); m.ID != ref.ID || !m.Finished {
		t.Errorf("replayed %s finished=%v, want the finished answer %s", m.ID, m.Finished, ref.ID)
	}
	if !replayed.ended() {
		t.Error("the stream stayed open after replaying the finished answer")
	}
}

func TestStreamUntilRefusesOtherValues(t *testing.T) {
	t.Parallel()
	c := unstarted(t, Config{}, nil)
	// Gone already: a stream that ignored until would end at once, with 200.
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	w := call(t, c.Handler(), "GET", "/api/events?until=done", "", func(r *http.Request) { *r = *r.WithContext(gone) })
	if e := decodeBody[apiError](t, w); w.Code != http.StatusBadRequest || !strings.Contains(e.Error, "until=finished") {
		t.Errorf("until=done: %d %s, want 400 naming until=finished", w.Code, w.Body)
	}
}

func mustPost(t *testing.T, c *Connector, thread, text string) connectors.Ref {
	t.Helper()
	ref, err := c.StartStream(context.Background(), dest("ops", thread), connectors.Message{Text: text})
	if err != nil {
		t.Fatal(err)
	}
	return ref
}
