package slack_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/opsbot/opsbot/bot/render"
	"github.com/opsbot/opsbot/connectors"
	opslack "github.com/opsbot/opsbot/connectors/slack"
	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

// A stream stopped while a task card of it is still in progress — the
// turn stopped or failed, the task ran long enough to show its line and
// Stop, or the answer rolled over to a new stream — keeps no card in
// progress: once stopped, Slack no longer changes its cards, so the stop
// itself carries each open card's final status (an error: the task had
// not ended), and a card that ended first keeps its own.
func TestStoppedStreamsCardsAreAllFinal(t *testing.T) {
	for _, tc := range []struct {
		name    string
		buttons []connectors.Button
		run     func(r *render.Renderer)
	}{
		{"the turn fails mid-task", nil, func(r *render.Renderer) {
			r.Close(context.Background(), errors.New("the turn was stopped"))
		}},
		{"a task shows its line and Stop", []connectors.Button{{ActionID: "stop", Value: "turn-1", Label: "Stop"}}, func(r *render.Renderer) {
			time.Sleep(10 * time.Second)
			synctest.Wait()
			r.Task(connectors.Task{ID: "call-2", Title: "`sleep 9` on web-1", Status: connectors.TaskComplete, Output: "web-1 · exit 0 · 9s"})
			r.Close(context.Background(), nil)
		}},
		{"the answer rolls over", nil, func(r *render.Renderer) {
			for range 50 {
				r.Write("Still waiting for the deploy. ")
				time.Sleep(10 * time.Second)
			}
			r.Task(connectors.Task{ID: "call-2", Title: "`sleep 500` on web-1", Status: connectors.TaskComplete, Output: "web-1 · exit 0 · 500s"})
			r.Close(context.Background(), nil)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fake, c := localConn(t, opslack.Config{})
				root := fake.Mention("C0OPS", "U0ALICE", "", "why is web slow")
				dest := connectors.Dest{Platform: opslack.Platform, Workspace: slackfake.Team, Channel: "C0OPS", Thread: root.TS,
					Recipient: connectors.User{ID: "U0ALICE"}}
				ctx := context.Background()
				r := render.NewRenderer(ctx, c, render.NewEditBudget(c.Limits().EditsPerMinute), nil, slog.New(slog.NewTextHandler(io.Discard, nil)), dest, tc.buttons...)
				r.Write("Looking. ")
				r.Task(connectors.Task{ID: "call-1", Title: "`uptime` on web-1", Status: connectors.TaskInProgress})
				time.Sleep(time.Second)
				r.Task(connectors.Task{ID: "call-1", Title: "`uptime` on web-1", Status: connectors.TaskComplete, Output: "web-1 · exit 0 · 1s"})
				r.Task(connectors.Task{ID: "call-2", Title: "`sleep` on web-1", Status: connectors.TaskInProgress})
				time.Sleep(2 * time.Second)
				synctest.Wait()
				tc.run(r)
				synctest.Wait()
				for _, m := range fake.StoppedOpen() {
					t.Errorf("message %s stopped with cards still open: %+v", m.TS, m.OpenTasks())
				}
				stopped := 0
				for _, m := range fake.Thread("C0OPS", root.TS)[1:] {
					if m.Streaming {
						t.Errorf("message %s still streams", m.TS)
					}
					for _, tk := range m.Tasks {
						stopped++
						if tk.ID == "call-1" && tk.Status != "complete" {
							t.Errorf("call-1, which ended first, shows %q; want complete", tk.Status)
						}
					}
				}
				if stopped < 2 {
					t.Errorf("%d cards in the thread; want both tasks' cards", stopped)
				}
			})
		})
	}
}
