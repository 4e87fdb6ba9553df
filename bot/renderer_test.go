package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/opsbot/opsbot/bot/render"
	"github.com/opsbot/opsbot/connectors"
)

var slackLike = connectors.Limits{MaxText: 3000, EditInterval: time.Second, EditsPerMinute: 50}

// A stream of deltas every 50 ms for 20 s against a Slack-like platform.
func TestRendererCadence(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		conn := newFakeConn(slackLike)
		r := render.NewRenderer(t.Context(), conn, render.NewEditBudget(slackLike.EditsPerMinute), nil, nil, connectors.Dest{Platform: "fake", Channel: "C1", Thread: "T1"})
		start := time.Now()
		var want strings.Builder
		r.Write("Hello")
		want.WriteString("Hello")
		synctest.Wait()
		if reqs := conn.reqs(); len(reqs) != 1 || reqs[0].kind != "post" || !reqs[0].at.Equal(start) {
			t.Fatalf("the first text was not posted at once: %+v", reqs)
		}
		for i := range 400 {
			time.Sleep(50 * time.Millisecond)
			d := fmt.Sprintf(" %d", i)
			r.Write(d)
			want.WriteString(d)
		}
		r.Close(context.Background(), nil)
		msgs := conn.thread("T1")
		if len(msgs) != 1 || msgs[0].msg.Text != want.String() {
			t.Fatalf("final text differs from the deltas")
		}
		if conn.limited != 0 {
			t.Errorf("%d requests hit the rate limit", conn.limited)
		}
		reqs := conn.reqs()
		for i := 1; i < len(reqs); i++ {
			if gap := reqs[i].at.Sub(reqs[i-1].at); gap < time.Second {
				t.Errorf("edits %d and %d %v apart; want ≥1s", i-1, i, gap)
			}
		}
		// 20 s of text at ≤1 edit/s: about 20 edits, not 400.
		if n := len(reqs); n < 15 || n > 22 {
			t.Errorf("%d requests for a 20 s stream; want about 20", n)
		}
		if len(msgs[0].msg.Buttons) != 0 || !conn.finished["m1"] {
			t.Error("the final message still has buttons or was not finished")
		}
	})
}

func TestRendererSplitsLongAnswersIntoNewMessages(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		limits := connectors.Limits{MaxText: 2000, EditInterval: time.Second}
		conn := newFakeConn(limits)
		r := render.NewRenderer(t.Context(), conn, render.NewEditBudget(0), nil, nil, connectors.Dest{Platform: "fake", Channel: "C1", Thread: "T1"})
		var want strings.Builder
		chunks := []string{"Here is the log:\n", "```\n"}
		for i := range 300 {
			chunks = append(chunks, fmt.Sprintf("Nov 22 03:%02d:00 web-1 nginx[42]: upstream timed out %d\n", i%60, i))
		}
		chunks = append(chunks, "```\n", "That is the whole log.")
		for _, c := range chunks {
			r.Write(c)
			want.WriteString(c)
			time.Sleep(20 * time.Millisecond)
		}
		r.Close(context.Background(), nil)
		msgs := conn.thread("T1")
		if len(msgs) < 3 {
			t.Fatalf("%d messages for %d bytes with a 2000 limit", len(msgs), want.Len())
		}
		pages := render.Split(want.String(), limits.MaxText)
		if len(pages) != len(msgs) {
			t.Fatalf("%d messages, want %d pages", len(msgs), len(pages))
		}
		for i, m := range msgs {
			if m.msg.Text != pages[i].String() {
				t.Errorf("message %d:\n%q\nwant\n%q", i, m.msg.Text, pages[i].String())
			}
			if open, _ := render.OpenFence(m.msg.Text); open {
				t.Errorf("message %d leaves a code block open", i)
			}
		}
		if conn.tooLong != 0 || conn.limited != 0 {
			t.Errorf("too long %d, rate limited %d", conn.tooLong, conn.limited)
		}
	})
}

func TestRendererErrorKeepsPartialAnswer(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		conn := newFakeConn(slackLike)
		stop := connectors.Button{ActionID: "stop", Label: "Stop", Style: connectors.StyleDanger}
		r := render.NewRenderer(t.Context(), conn, render.NewEditBudget(50), nil, nil, connectors.Dest{Platform: "fake", Channel: "C1", Thread: "T1"}, stop)
		r.Write("The disk on web-1 is ")
		synctest.Wait()
		if m := conn.thread("T1"); len(m[0].msg.Buttons) != 1 {
			t.Error("no Stop button while streaming")
		}
		r.Status("running `df -h` on web-1…", false)
		r.Status("`df -h` on web-1: exit 0 in 80ms", true)
		r.Close(context.Background(), errors.New("the model's connection dropped"))
		m := conn.thread("T1")[0].msg
		if !strings.HasPrefix(m.Text, "The disk on web-1 is ") || !strings.Contains(m.Text, "⚠️ the model's connection dropped") {
			t.Errorf("final text = %q", m.Text)
		}
		if m.Context != "`df -h` on web-1: exit 0 in 80ms" || len(m.Buttons) != 0 {
			t.Errorf("context = %q, buttons = %d", m.Context, len(m.Buttons))
		}
	})
}

// Twenty answers stream at once into one workspace whose edit budget is
// 50 a minute: the budget is shared, so nothing is refused.
func TestRendererSharesTheWorkspaceBudget(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		conn := newFakeConn(slackLike)
		budget := render.NewEditBudget(slackLike.EditsPerMinute)
		var wg sync.WaitGroup
		for s := range 20 {
			wg.Go(func() {
				r := render.NewRenderer(t.Context(), conn, budget, nil, nil, connectors.Dest{Platform: "fake", Channel: "C1", Thread: fmt.Sprintf("T%d", s)})
				for i := range 120 { // two minutes of streaming
					r.Write(fmt.Sprintf("%d ", i))
					time.Sleep(time.Second)
				}
				r.Close(context.Background(), nil)
			})
		}
		wg.Wait()
		if conn.limited != 0 {
			t.Errorf("%d requests were rate limited", conn.limited)
		}
		for s := range 20 {
			msgs := conn.thread(fmt.Sprintf("T%d", s))
			want := ""
			for i := range 120 {
				want += fmt.Sprintf("%d ", i)
			}
			if len(msgs) != 1 || msgs[0].msg.Text != want {
				t.Fatalf("stream %d ended incomplete", s)
			}
			if len(msgs[0].history) < 3 {
				t.Errorf("stream %d showed only %d states in 2 minutes", s, len(msgs[0].history))
			}
		}
	})
}

// failingConn refuses its second Post with an error that is not a rate
// limit, as a platform's internal error would.
type failingConn struct {
	*fakeConn
	mu    sync.Mutex
	posts int
}

func (f *failingConn) Post(ctx context.Context, d connectors.Dest, m connectors.Message) (connectors.Ref, error) {
	f.mu.Lock()
	f.posts++
	n := f.posts
	f.mu.Unlock()
	if n == 2 {
		return connectors.Ref{}, errors.New("internal_error")
	}
	return f.fakeConn.Post(ctx, d, m)
}

func TestRendererSurvivesAPageThatCannotBePosted(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		conn := &failingConn{fakeConn: newFakeConn(connectors.Limits{MaxText: 100, EditInterval: time.Second})}
		r := render.NewRenderer(t.Context(), conn, render.NewEditBudget(0), nil, nil, connectors.Dest{Platform: "fake", Channel: "C1", Thread: "T1"})
		want := strings.Repeat("abcdefghi ", 30) // three pages in one flush
		r.Write(want)
		r.Close(context.Background(), nil)
		var got strings.Builder
		for _, m := range conn.thread("T1") {
			got.WriteString(m.msg.Text)
		}
		if got.String() != want {
			t.Errorf("after a failed post the answer reads %q", got.String())
		}
	})
}
