package bot

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/opsbot/opsbot/bot/render"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/store"
)

// sevenMinuteAnswer writes an answer of about 2,000 bytes over seven
// minutes into r, as a slow model with long tool calls does, and returns
// it.
func sevenMinuteAnswer(r *render.Renderer) string {
	var want strings.Builder
	for i := range 140 {
		d := fmt.Sprintf("step %03d done. ", i)
		r.Write(d)
		want.WriteString(d)
		time.Sleep(3 * time.Second)
	}
	return want.String()
}

// shown is the text of the thread's messages, in order, as the platform
// shows them now.
func shown(f *fakeConn, thread string) string {
	var b strings.Builder
	for _, m := range f.thread(thread) {
		b.WriteString(m.msg.Text)
	}
	return b.String()
}

// A platform that ends streams after 5 minutes and says so in its Limits:
// the renderer rolls each stream over before then, so no request fails and
// the answer is whole, in streams that all stopped.
func TestRendererRollsStreamsOverBeforeTheirLifetime(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		limits := connectors.Limits{MaxText: 3000, EditInterval: time.Second, EditsPerMinute: 50, StreamLifetime: 5 * time.Minute}
		conn := newStreamConn(limits)
		conn.lifetime = 5 * time.Minute
		stop := connectors.Button{ActionID: ActionStop, Label: "Stop"}
		r := render.NewRenderer(t.Context(), conn, render.NewEditBudget(50), nil, nil, connectors.Dest{Platform: "fake", Channel: "C1", Thread: "T1"}, stop)
		want := sevenMinuteAnswer(r)
		// No status line before Close: a new one stops a live stream with
		// its Stop button (restyled, shown at once), and whether the
		// renderer flushes between the two is a race of this test's, not
		// the roll-over's.
		r.Close(context.Background(), nil)

		if got := shown(conn.fakeConn, "T1"); got != want {
			t.Errorf("the thread shows %d of %d bytes:\n%q", len(got), len(want), got)
		}
		conn.mu.Lock()
		defer conn.mu.Unlock()
		if conn.expired != 0 || conn.refused != 0 {
			t.Errorf("%d changes refused as past the lifetime, %d refused otherwise; want none", conn.expired, conn.refused)
		}
		if len(conn.streams) < 2 {
			t.Errorf("%d streams for a 7-minute answer on a platform whose streams last 5", len(conn.streams))
		}
		for id, st := range conn.streams {
			if !st.stopped {
				t.Errorf("stream %s never stopped", id)
			}
			if len(st.final.Buttons) != 0 {
				t.Errorf("stream %s ended with its Stop button", id)
			}
		}
	})
}

// A platform that ends a stream the connector did not declare a lifetime
// for: the renderer learns it from the error, and the answer still ends
// complete, by an edit of the message the stream left.
func TestRendererFinishesAnExpiredStreamByEdit(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		limits := connectors.Limits{MaxText: 3000, EditInterval: time.Second, EditsPerMinute: 50}
		conn := newStreamConn(limits)
		conn.lifetime = 5 * time.Minute
		r := render.NewRenderer(t.Context(), conn, render.NewEditBudget(50), nil, nil, connectors.Dest{Platform: "fake", Channel: "C1", Thread: "T1"})
		want := sevenMinuteAnswer(r)
		r.Close(context.Background(), nil)

		msgs := conn.thread("T1")
		if got := shown(conn.fakeConn, "T1"); got != want {
			t.Fatalf("the thread shows %d of %d bytes", len(got), len(want))
		}
		if len(msgs) != 1 {
			t.Errorf("%d messages; want the one the stream began", len(msgs))
		}
		edits := 0
		for _, q := range conn.reqs() {
			if q.kind == "edit" {
				edits++
			}
		}
		conn.mu.Lock()
		defer conn.mu.Unlock()
		if conn.expired != 1 || edits == 0 {
			t.Errorf("%d changes refused as past the lifetime, %d edits; want 1 and at least 1", conn.expired, edits)
		}
	})
}

// At start-up, an answer a crash left mid-stream is stopped with what it
// had and a note; a stream the platform ended meanwhile is edited so.
func TestRecoverFinalizesInterruptedStreams(t *testing.T) {
	t.Parallel()
	for _, ended := range []bool{false, true} {
		conn := newStreamConn(webLimits)
		conn.name = "web"
		b, stop := startBot(t, t.TempDir(), conn, botOptions{})
		t.Cleanup(stop)
		ctx := context.Background()
		ref, _ := conn.StartStream(ctx, connectors.Dest{Platform: "web", Channel: "ops", Thread: "t9"}, connectors.Message{Text: "The disk is at"})
		if ended {
			conn.mu.Lock()
			conn.streams[ref.ID].started = time.Now().Add(-time.Hour)
			conn.lifetime = time.Minute
			conn.mu.Unlock()
		}
		storeOf(b).Sessions().RecordStreaming(ctx, store.PostedMessage{Platform: "web", Channel: "ops", Thread: "t9", MessageID: ref.ID, Text: "The disk is at"})
		b.Recover(ctx)
		got := conn.thread("t9")[0].msg.Text
		conn.mu.Lock()
		stopped := conn.streams[ref.ID].stopped
		conn.mu.Unlock()
		if !strings.HasPrefix(got, "The disk is at") || !strings.Contains(got, "interrupted") || stopped == ended {
			t.Errorf("stream ended by the platform %v: shows %q, stopped %v", ended, got, stopped)
		}
	}
}
