package testfake

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/store"
)

// Recorder collects the events a turn reports; On, when set, sees each
// as it comes.
type Recorder struct {
	mu     sync.Mutex
	Events []agent.Event
	On     func(agent.Event)
}

// Emit records ev: pass it as a turn's emit.
func (r *Recorder) Emit(ev agent.Event) {
	r.mu.Lock()
	r.Events = append(r.Events, ev)
	on := r.On
	r.mu.Unlock()
	if on != nil {
		on(ev)
	}
}

// Text is the answer the turn streamed.
func (r *Recorder) Text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := ""
	for _, ev := range r.Events {
		if ev.Kind == agent.TextDelta {
			s += ev.Text
		}
	}
	return s
}

// Kinds are the events of kind k.
func (r *Recorder) Kinds(k agent.TurnEventKind) []agent.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []agent.Event
	for _, ev := range r.Events {
		if ev.Kind == k {
			out = append(out, ev)
		}
	}
	return out
}

// Store opens a real SQLite file with one session in it, of requester
// alice.
func Store(t *testing.T) (*store.Store, agent.SessionInfo) {
	t.Helper()
	st, err := store.Open(context.Background(), store.Config{Path: filepath.Join(t.TempDir(), "agent.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	sess, _, err := st.Sessions().SessionFor(context.Background(), store.ThreadKey{Platform: "test", Channel: "c", Thread: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	return st, agent.SessionInfo{ID: sess.ID, Requester: "alice", Platform: "test", Channel: "c"}
}

// Load is a session's history, failing the test when it cannot be read.
func Load(t *testing.T, h agent.History, id int64) []agent.Message {
	t.Helper()
	msgs, _, err := h.Load(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// JSON is v as JSON, for messages and comparisons.
func JSON(v any) string { b, _ := json.Marshal(v); return string(b) }
