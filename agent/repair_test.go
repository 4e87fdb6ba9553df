package agent_test

import (
	"context"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/testfake"
)

// Nothing the model sends may make the stored history invalid for its own
// API: each case is a response that used to break the thread for good, and
// the next turn must still be accepted by a fake enforcing the API's rules.
func TestNoModelResponseBreaksTheThread(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		turns []testfake.Turn // the first turn's model responses
		extra int             // calls that are not model turns (a summary)
	}{
		{"blank text before a tool call", []testfake.Turn{
			{Text: []string{"\n\n"}, Calls: []testfake.Call{{ID: "c1", Name: "run_command", Args: run("web-1", "uptime")}}},
			testfake.Say("Up 3 days."),
		}, 0},
		{"compact with another call", []testfake.Turn{
			testfake.Use("c2", "", "compact", `{}`, "run_command", run("web-1", "uptime")),
			testfake.Say("SUMMARY: asked about web-1 before."),
			testfake.Say("Up 3 days."),
		}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			eachWire(t, func(t *testing.T, w wire) {
				turns := append([]testfake.Turn{testfake.Say("Hello.")}, tc.turns...)
				turns = append(turns, testfake.Say("Still fine."))
				f, p := w.model(t, turns...)
				h, sess := sqliteSession(t)
				a := investigator(p, h, &fleet{outputs: map[string]string{"uptime": "up 3 days"}})
				a.Tools.Add(agent.NewCompactTool())
				for i, q := range []string{"hi", "is web-1 up?", "and now?"} {
					ev := &testfake.Recorder{}
					if err := a.Turn(context.Background(), sess, q, ev.Emit); err != nil {
						t.Fatalf("turn %d: %v", i+1, err)
					}
				}
				if n := len(f.Requests()); n != len(turns) {
					t.Errorf("%d requests; want %d", n, len(turns))
				}
				msgs, _, _ := h.Load(context.Background(), sess.ID)
				for _, m := range msgs {
					for _, b := range m.Content {
						if b.Type == agent.BlockText && b.Text == "\n\n" {
							t.Errorf("a blank text block was stored")
						}
					}
				}
			})
		})
	}
}
