package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/testfake"
)

// What the person reads: paragraphs stay apart across a tool call, an
// empty answer still says something, a cut stream is worded without
// addresses or Go errors, and a rate-limit retry is announced.
func TestWhatThePersonReads(t *testing.T) {
	t.Parallel()
	eachWire(t, func(t *testing.T, w wire) {
		h, sess := sqliteSession(t)
		f := &fleet{outputs: map[string]string{"df -h": "/dev/sda1 42%"}}
		turn := func(t *testing.T, replies ...testfake.Reply) (*testfake.Recorder, error) {
			t.Helper()
			_, p := w.modelReplies(t, replies...)
			ev := &testfake.Recorder{}
			return ev, investigator(p, h, f).Turn(context.Background(), sess, "how full is web-1?", ev.Emit)
		}
		once := func(turn testfake.Turn) testfake.Reply { return testfake.Reply{Raw: w.sse(turn), Once: true} }

		t.Run("paragraphs", func(t *testing.T) {
			ev, err := turn(t, once(testfake.Use("c1", "Let me check the disks.", "run_command", run("web-1", "df -h"))),
				once(testfake.Say("Disk usage on web-1 is 42%.")))
			if want := "Let me check the disks.\n\nDisk usage on web-1 is 42%."; err != nil || ev.Text() != want {
				t.Errorf("text = %q, %v; want %q", ev.Text(), err, want)
			}
		})
		t.Run("empty answer", func(t *testing.T) {
			ev, err := turn(t, once(testfake.Say()))
			if err != nil || strings.TrimSpace(ev.Text()) == "" {
				t.Errorf("text = %q, %v; want a word on the empty answer", ev.Text(), err)
			}
		})
		t.Run("blank answer", func(t *testing.T) {
			ev, err := turn(t, once(testfake.Say("  ", "\n\n", " ")))
			if err != nil || strings.TrimSpace(ev.Text()) == "" || !strings.Contains(ev.Text(), "without an answer") {
				t.Errorf("text = %q, %v; a blank answer must say there was none", ev.Text(), err)
			}
		})
		t.Run("cut stream", func(t *testing.T) {
			_, err := turn(t, testfake.Reply{Raw: w.sse(testfake.Say("The disk", " is", " at")), CutAfter: 3, Once: true})
			if err == nil {
				t.Fatal("no error")
			}
			for _, bad := range []string{"127.0.0.1", "read tcp", "EOF", "connection reset"} {
				if strings.Contains(err.Error(), bad) {
					t.Errorf("the person reads %q", err)
				}
			}
		})
		t.Run("rate limit", func(t *testing.T) {
			ev, err := turn(t, testfake.Reply{Status: 429, Header: map[string]string{"Retry-After": "2"}, Body: w.rateLimited},
				once(testfake.Say("42%.")))
			var notices []string
			for _, n := range ev.Kinds(agent.Notice) {
				notices = append(notices, n.Text)
			}
			if err != nil || len(notices) != 1 || notices[0] != "rate limited by the model API, retrying in 2 s" {
				t.Errorf("notices = %q, %v", notices, err)
			}
		})
	})
}
