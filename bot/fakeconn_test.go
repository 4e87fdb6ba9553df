package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/opsbot/opsbot/bot/render"
	"github.com/opsbot/opsbot/connectors"
)

// fakeConn is a platform that records every request and enforces the
// limits it advertises, answering like Slack does when they are broken: a
// rate-limit error with a retry-after, or a length error.
type fakeConn struct {
	name   string
	limits connectors.Limits

	mu       sync.Mutex
	next     int
	msgs     map[string]*fakeMsg
	order    []string
	requests []fakeReq
	limited  int // requests refused for rate
	tooLong  int
	window   map[string][]time.Time // edits in the last minute, per workspace
	handler  connectors.Handler
	finished map[string]bool
	// down drops every post and edit, as for a process killed with
	// kill -9: nothing it does reaches the platform.
	down bool
	// changed is closed, and replaced, at every change to the messages.
	changed chan struct{}
}

// changes returns a channel that is closed at the next change to the
// platform's messages (a post, an edit, a finish): tests wait on it.
func (f *fakeConn) changes() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.changed == nil {
		f.changed = make(chan struct{})
	}
	return f.changed
}

// notify wakes whoever waits on changes; f.mu is held.
func (f *fakeConn) notify() {
	if f.changed != nil {
		close(f.changed)
		f.changed = nil
	}
}

type fakeMsg struct {
	id              string
	channel, thread string
	msg             connectors.Message
	history         []string // every text it showed
	lastEdit        time.Time
}

type fakeReq struct {
	at        time.Time
	kind      string // post or edit
	id        string
	workspace string
}

func newFakeConn(limits connectors.Limits) *fakeConn {
	return &fakeConn{name: "fake", limits: limits, msgs: map[string]*fakeMsg{}, finished: map[string]bool{}, window: map[string][]time.Time{}}
}

func (f *fakeConn) Name() string              { return f.name }
func (f *fakeConn) Limits() connectors.Limits { return f.limits }

func (f *fakeConn) Start(ctx context.Context, h connectors.Handler) error {
	f.mu.Lock()
	f.handler = h
	f.mu.Unlock()
	<-ctx.Done()
	return nil
}

// Post posts a complete message.
func (f *fakeConn) Post(_ context.Context, d connectors.Dest, m connectors.Message) (connectors.Ref, error) {
	return f.add(d, m, true)
}

// add posts a message, complete or being written.
func (f *fakeConn) add(d connectors.Dest, m connectors.Message, complete bool) (connectors.Ref, error) {
	channel, thread := d.Channel, d.Thread
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return connectors.Ref{}, errors.New("the process is gone")
	}
	if f.limits.MaxText > 0 && render.Chars(m.Text) > f.limits.MaxText {
		f.tooLong++
		return connectors.Ref{}, fmt.Errorf("msg_too_long: %d > %d", render.Chars(m.Text), f.limits.MaxText)
	}
	if f.limits.MaxButtons > 0 && len(m.Buttons) > f.limits.MaxButtons {
		return connectors.Ref{}, fmt.Errorf("invalid_form_body: %d buttons > %d", len(m.Buttons), f.limits.MaxButtons)
	}
	f.next++
	id := fmt.Sprintf("m%d", f.next)
	if thread == "" {
		thread = id
	}
	m = plainMessage(m)
	f.msgs[id] = &fakeMsg{id: id, channel: channel, thread: thread, msg: m, history: []string{m.Text}, lastEdit: time.Now()}
	f.order = append(f.order, id)
	f.requests = append(f.requests, fakeReq{at: time.Now(), kind: "post", id: id})
	f.finished[id] = complete
	f.notify()
	return connectors.Ref{Platform: f.name, Workspace: d.Workspace, Channel: channel, Thread: thread, ID: id}, nil
}

func (f *fakeConn) Edit(_ context.Context, ref connectors.Ref, m connectors.Message) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	if f.down {
		return errors.New("the process is gone")
	}
	msg, ok := f.msgs[ref.ID]
	if !ok {
		return fmt.Errorf("message_not_found")
	}
	if f.limits.MaxText > 0 && render.Chars(m.Text) > f.limits.MaxText {
		f.tooLong++
		return fmt.Errorf("msg_too_long")
	}
	if f.limits.MaxButtons > 0 && len(m.Buttons) > f.limits.MaxButtons {
		return fmt.Errorf("invalid_form_body: %d buttons > %d", len(m.Buttons), f.limits.MaxButtons)
	}
	if iv := f.limits.EditInterval; iv > 0 && now.Sub(msg.lastEdit) < iv {
		f.limited++
		return &connectors.RateLimitError{RetryAfter: iv - now.Sub(msg.lastEdit)}
	}
	if pm := f.limits.EditsPerMinute; pm > 0 {
		var recent []time.Time
		for _, t := range f.window[ref.Workspace] {
			if now.Sub(t) < time.Minute {
				recent = append(recent, t)
			}
		}
		if len(recent) >= pm {
			f.limited++
			f.window[ref.Workspace] = recent
			return &connectors.RateLimitError{RetryAfter: time.Minute - now.Sub(recent[0])}
		}
		f.window[ref.Workspace] = append(recent, now)
	}
	msg.msg, msg.lastEdit = plainMessage(m), now
	msg.history = append(msg.history, msg.msg.Text)
	f.requests = append(f.requests, fakeReq{at: now, kind: "edit", id: ref.ID, workspace: ref.Workspace})
	f.notify()
	return nil
}

// finish marks a message complete.
func (f *fakeConn) finish(ref connectors.Ref) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.finished[ref.ID] = true
	f.notify()
}

// thread returns copies of the messages of a thread in posting order.
func (f *fakeConn) thread(thread string) []*fakeMsg {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*fakeMsg
	for _, id := range f.order {
		if m := f.msgs[id]; m.thread == thread {
			c := *m
			c.history = append([]string(nil), m.history...)
			out = append(out, &c)
		}
	}
	return out
}

func (f *fakeConn) reqs() []fakeReq {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeReq(nil), f.requests...)
}

// plainMessage shows mentions as the web chat does, @id, so that tests read
// what a person sees.
func plainMessage(m connectors.Message) connectors.Message {
	m.Text, m.Context = connectors.PlainMentions(m.Text), connectors.PlainMentions(m.Context)
	return m
}

// editsIn counts the edits of messages in workspace.
func (f *fakeConn) editsIn(workspace string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, q := range f.requests {
		if q.kind == "edit" && q.workspace == workspace {
			n++
		}
	}
	return n
}

// FindButton finds the newest message of d's thread showing the button,
// as the web chat does (connectors.ButtonFinder).
func (f *fakeConn) FindButton(_ context.Context, d connectors.Dest, actionID, value string) (connectors.Ref, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, id := range slices.Backward(f.order) {
		m := f.msgs[id]
		if m.thread != d.Thread {
			continue
		}
		for _, b := range m.msg.Buttons {
			if b.ActionID == actionID && b.Value == value {
				return connectors.Ref{Platform: f.name, Workspace: d.Workspace, Channel: m.channel, Thread: m.thread, ID: id}, true, nil
			}
		}
	}
	return connectors.Ref{}, false, nil
}
