package console

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/connectortest"
)

// lockedBuffer is a terminal's output, read by the test while written.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// rig is a Connector on a terminal whose answers the test types, started
// with a handler that hands events to the test (or to bot, when set).
type rig struct {
	conn     *Connector
	out, err *lockedBuffer
	typed    *io.PipeWriter
	events   chan connectors.Event
}

func newRig(t *testing.T, user string, bot func(*Connector, connectors.Event)) *rig {
	t.Helper()
	tty, typed := io.Pipe()
	r := &rig{out: &lockedBuffer{}, err: &lockedBuffer{}, typed: typed, events: make(chan connectors.Event, 16)}
	term := &Terminal{Out: r.out, Err: r.err, TTY: tty, Interactive: true}
	r.conn = New(term, user, "approve", "deny")
	r.conn.Hide = func(m connectors.Message) bool { return m.Text == "queued" }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.conn.Start(ctx, func(_ context.Context, ev connectors.Event) error {
			if bot != nil {
				go bot(r.conn, ev)
				return nil
			}
			r.events <- ev
			return nil
		})
	}()
	t.Cleanup(func() { cancel(); typed.Close(); <-done })
	return r
}

// The terminal passes the connectors' conformance suite: what it shows is
// what it printed, and a click is the person answering y to the question
// a card asks.
func TestConformance(t *testing.T) {
	t.Parallel()
	r := newRig(t, "U04BOB", nil)
	h := connectortest.Harness{
		Conn:   r.conn,
		Events: r.events,
		Dest:   connectors.Dest{Platform: "console", Channel: "U04BOB", Thread: "t1"},
		Shown: func(ref connectors.Ref) (string, bool) {
			r.conn.mu.Lock()
			defer r.conn.mu.Unlock()
			m, ok := r.conn.shown[ref.ID]
			return m.Text, ok
		},
		Mentioned: func(id string) string { return "@" + id },
		Click: func(ref connectors.Ref, b connectors.Button, u connectors.User) {
			if u.ID != r.conn.User {
				t.Fatalf("only the person at the terminal clicks, not %s", u.ID)
			}
			r.typed.Write([]byte("y\n"))
		},
		Sent: func() []string { return []string{r.out.String(), r.err.String()} },
	}
	for _, tc := range connectortest.Cases(h) {
		t.Run(tc.Name, func(t *testing.T) { tc.Test(t) })
	}
	if !strings.Contains(r.err.String(), "approve?") || !strings.Contains(r.err.String(), "Run it? [y/N]") {
		t.Errorf("the card was not asked y/N: %q", r.err.String())
	}
}

// A line goes to the bot as a mention in its thread, and Say returns once
// its answer is finished; the answer streams to stdout and each status
// line shows once on stderr. A hidden note, and another thread's answer,
// do not end the wait.
func TestSayWaitsForTheAnswer(t *testing.T) {
	t.Parallel()
	got := make(chan connectors.Event, 1)
	r := newRig(t, "alice", func(c *Connector, ev connectors.Event) {
		got <- ev
		ctx := context.Background()
		d := connectors.Dest{Platform: ev.Platform, Channel: ev.Channel, Thread: ev.Thread}
		c.Post(ctx, d, connectors.Message{Text: "queued"})
		c.Post(ctx, connectors.Dest{Platform: ev.Platform, Channel: ev.Channel, Thread: "another"}, connectors.Message{Text: "🔔 job 3 ended\n"})
		ref, _ := c.StartStream(ctx, d, connectors.Message{Text: "Checking", Context: "running `df -h` on local…"})
		c.AppendStream(ctx, ref, " the disks.")
		c.Edit(ctx, ref, connectors.Message{Text: "Checking the disks.", Context: "running `df -h` on local…\n✓ `df -h` on local: exit 0"})
		c.StopStream(ctx, ref, connectors.Message{Text: "Checking the disks. Fine, says " + connectors.Mention("alice") + ".",
			Context: "running `df -h` on local…\n✓ `df -h` on local: exit 0"})
	})
	r.conn.Say(t.Context(), Line{Thread: "t1", ID: "t1-1", Text: "how full is the disk?", Question: true}, nil)
	ev := <-got
	if ev.Kind != connectors.EventMessage || ev.Platform != "console" || ev.Thread != "t1" || ev.ID != "t1-1" || ev.User.ID != "alice" ||
		ev.Channel != "alice" || !ev.Mention || !ev.Question || ev.Text != "how full is the disk?" {
		t.Errorf("the bot got %+v", ev)
	}
	if out := r.out.String(); !strings.HasSuffix(out, "Checking the disks. Fine, says @alice.\n") || strings.Contains(out, "queued") {
		t.Errorf("stdout = %q", out)
	}
	if errs := r.err.String(); strings.Count(errs, "running df -h on local…") != 1 || strings.Count(errs, "✓ df -h on local: exit 0") != 1 {
		t.Errorf("each status line once on stderr: %q", errs)
	}
}

// Ctrl-C while a line's work runs sends "cancel" to the bot, and Say
// waits for the work to end.
func TestSayInterruptStopsTheWork(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	r := newRig(t, "alice", func(c *Connector, ev connectors.Event) {
		d := connectors.Dest{Platform: ev.Platform, Channel: ev.Channel, Thread: ev.Thread}
		switch ev.Text {
		case "run local sleep 60":
			c.StartStream(context.Background(), d, connectors.Message{Text: "", Context: "running `sleep 60` on local…"})
			close(started)
		case "cancel":
			c.Post(context.Background(), d, connectors.Message{Text: "⏹ stopped by @alice"})
		}
	})
	interrupt := make(chan os.Signal, 1)
	said := make(chan struct{})
	go func() {
		defer close(said)
		r.conn.Say(t.Context(), Line{Thread: "t1", ID: "t1-1", Text: "run local sleep 60"}, interrupt)
	}()
	<-started
	interrupt <- os.Interrupt
	select {
	case <-said:
	case <-time.After(time.Minute): // a hang guard
		t.Fatal("Say did not return after the work was stopped")
	}
	if !strings.Contains(r.err.String(), "stopping…") || !strings.Contains(r.out.String(), "stopped by @alice") {
		t.Errorf("stdout %q, stderr %q", r.out.String(), r.err.String())
	}
}

// A card posted before Start has the bot's handler (a front that opens
// the terminal and asks at once, as `opsbot hosts exec` does) is asked
// once Start has it, and the answer reaches the handler: it was dropped.
func TestCardPostedBeforeStartIsAsked(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		tty, typed := io.Pipe()
		errs := &lockedBuffer{}
		conn := New(&Terminal{Out: &lockedBuffer{}, Err: errs, TTY: tty, Interactive: true}, "alice", "approve", "deny")
		card := connectors.Message{Text: "Approval needed: `touch x`", Buttons: []connectors.Button{
			{ActionID: "approve", Value: "r1", Label: "Approve"}, {ActionID: "deny", Value: "r1", Label: "Deny"}}}
		posted := make(chan error, 1)
		go func() {
			_, err := conn.Post(t.Context(), connectors.Dest{Platform: "console", Channel: "alice", Thread: "exec-1"}, card)
			posted <- err
		}()
		synctest.Wait() // the post has gone as far as it can without Start
		clicks := make(chan connectors.Event, 1)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			defer close(done)
			conn.Start(ctx, func(_ context.Context, ev connectors.Event) error { clicks <- ev; return nil })
		}()
		typed.Write([]byte("y\n"))
		if ev := <-clicks; ev.Kind != connectors.EventAction || ev.ActionID != "approve" || ev.Value != "r1" || ev.User.ID != "alice" {
			t.Errorf("the answer reached the bot as %+v", ev)
		}
		if err := <-posted; err != nil || !strings.Contains(errs.String(), "touch x") {
			t.Errorf("post: %v; the terminal showed %q", err, errs.String())
		}
		cancel()
		typed.Close()
		<-done
	})
}
