package bot

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/opsbot/opsbot/bot/render"
	"github.com/opsbot/opsbot/connectors"
)

var stopButton = connectors.Button{ActionID: ActionStop, Value: "T1", Label: "Stop", Style: connectors.StyleDanger}

// An answer whose first word is slow (a model API stalled on its headers)
// shows a placeholder with Stop within two seconds; the first words take
// the placeholder's place in the same message.
func TestSlowFirstWordShowsAPlaceholderWithStop(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		conn := newFakeConn(slackLike)
		start := time.Now()
		r := render.NewRenderer(t.Context(), conn, render.NewEditBudget(slackLike.EditsPerMinute), nil, nil,
			connectors.Dest{Platform: "fake", Channel: "C1", Thread: "T1"}, stopButton)
		time.Sleep(time.Minute)
		synctest.Wait()
		reqs := conn.reqs()
		if len(reqs) != 1 || reqs[0].kind != "post" || reqs[0].at.Sub(start) > 2*time.Second {
			t.Fatalf("requests while the model is silent for a minute: %+v; want one post within 2 s", reqs)
		}
		m := conn.thread("T1")[0].msg
		if m.Context != render.PlaceholderLine || len(m.Buttons) != 1 || m.Buttons[0].ActionID != ActionStop {
			t.Fatalf("the placeholder shows %q with %d buttons; want %q with Stop", m.Context, len(m.Buttons), render.PlaceholderLine)
		}
		r.Write("Disk is at 91%.")
		r.Close(context.Background(), nil)
		msgs := conn.thread("T1")
		if len(msgs) != 1 || msgs[0].msg.Text != "Disk is at 91%." || msgs[0].msg.Context != "" || len(msgs[0].msg.Buttons) != 0 {
			t.Errorf("the answer is %d messages, the first %+v; want the words in the placeholder's message, no placeholder line, no Stop", len(msgs), msgs[0].msg)
		}
	})
}

// An answer whose first word comes quickly posts no placeholder, and an
// answer without buttons never shows one.
func TestQuickAnswerPostsNoPlaceholder(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		conn := newFakeConn(slackLike)
		r := render.NewRenderer(t.Context(), conn, render.NewEditBudget(slackLike.EditsPerMinute), nil, nil,
			connectors.Dest{Platform: "fake", Channel: "C1", Thread: "T1"}, stopButton)
		time.Sleep(time.Second)
		r.Write("up 3 days")
		time.Sleep(time.Minute)
		r.Close(context.Background(), nil)
		plain := render.NewRenderer(t.Context(), conn, render.NewEditBudget(slackLike.EditsPerMinute), nil, nil,
			connectors.Dest{Platform: "fake", Channel: "C1", Thread: "T2"})
		time.Sleep(time.Minute)
		synctest.Wait()
		for _, m := range append(conn.thread("T1"), conn.thread("T2")...) {
			for _, shown := range m.history {
				if shown == render.PlaceholderLine {
					t.Errorf("a placeholder was shown: %q", m.history)
				}
			}
			if m.msg.Context == render.PlaceholderLine {
				t.Errorf("a placeholder line is shown: %+v", m.msg)
			}
		}
		if n := len(conn.thread("T2")); n != 0 {
			t.Errorf("an answer without buttons and without words posted %d messages", n)
		}
		plain.Close(context.Background(), nil)
	})
}

// A placeholder that the answer's end finds alone says the answer ended
// without a word, never an empty message.
func TestPlaceholderAloneAtTheEndSaysSo(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		conn := newFakeConn(slackLike)
		r := render.NewRenderer(t.Context(), conn, render.NewEditBudget(slackLike.EditsPerMinute), nil, nil,
			connectors.Dest{Platform: "fake", Channel: "C1", Thread: "T1"}, stopButton)
		time.Sleep(5 * time.Second)
		r.Close(context.Background(), nil)
		msgs := conn.thread("T1")
		if len(msgs) != 1 || msgs[0].msg.Text != "(ended without an answer)" || msgs[0].msg.Context != "" {
			t.Errorf("messages %+v; want the placeholder's message saying the answer ended without one", msgs)
		}
	})
}
