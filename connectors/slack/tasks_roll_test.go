package slack_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/opsbot/opsbot/bot/render"
	"github.com/opsbot/opsbot/connectors"
	opslack "github.com/opsbot/opsbot/connectors/slack"
	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

// rollingTask streams an answer with Stop whose one command runs for
// runFor while the answer's text keeps coming, long enough for its
// stream to roll over; it returns the thread's answer messages (those
// showing text, streamed or edited in, oldest first) and the whole text
// written.
// Call it only inside a synctest bubble: its sleeps are the bubble's
// fake clock, minutes of stream lifetime passing at once.
func rollingTask(t *testing.T, runFor time.Duration) (*slackfake.Server, []slackfake.Message, string) {
	fake, c := localConn(t, opslack.Config{})
	root := fake.Mention("C0OPS", "U0ALICE", "", "watch the deploy")
	dest := connectors.Dest{Platform: opslack.Platform, Workspace: slackfake.Team, Channel: "C0OPS", Thread: root.TS,
		Recipient: connectors.User{ID: "U0ALICE"}}
	r := render.NewRenderer(context.Background(), c, render.NewEditBudget(c.Limits().EditsPerMinute), nil,
		slog.New(slog.NewTextHandler(io.Discard, nil)), dest, stopButton)
	var all strings.Builder
	write := func(s string) { r.Write(s); all.WriteString(s) }
	write("Watching. ")
	r.Task(connectors.Task{ID: "call-1", Title: "`deploy --wait` on web-1", Status: connectors.TaskInProgress})
	start := time.Now()
	for time.Since(start) < runFor {
		time.Sleep(10 * time.Second)
		write("Still deploying. ")
	}
	r.Task(connectors.Task{ID: "call-1", Title: "`deploy --wait` on web-1", Status: connectors.TaskComplete, Output: "web-1 · exit 0"})
	write("Deployed.")
	r.Close(context.Background(), nil)
	synctest.Wait()
	var streams []slackfake.Message
	for _, m := range fake.Thread("C0OPS", root.TS)[1:] {
		if m.Shown() != "" && m.Shown() != m.Context() { // not the Stop message below (control.go)
			streams = append(streams, m)
		}
		if len(m.Buttons()) > 0 {
			t.Errorf("message %s still shows buttons %v after the answer ended", m.TS, m.Buttons())
		}
	}
	for _, m := range fake.StoppedOpen() {
		t.Errorf("message %s stopped with cards still open: %+v", m.TS, m.OpenTasks())
	}
	if len(streams) < 2 {
		t.Fatalf("%d streams; want the answer rolled over:\n%s", len(streams), fake.ThreadText("C0OPS", root.TS))
	}
	var shown strings.Builder
	for _, m := range streams {
		if m.Streaming {
			t.Errorf("message %s still streams", m.TS)
		}
		shown.WriteString(m.Shown())
	}
	if got := strings.Join(strings.Fields(shown.String()), " "); got != strings.Join(strings.Fields(all.String()), " ") {
		t.Errorf("the streams show %q; want the whole answer, in order", got)
	}
	return fake, streams, all.String()
}

// A stream rolled over while its command's card is in progress stays
// open holding the card, the text going on in the new stream; when the
// command ends, within the old stream's lifetime, the card ends there
// with its true status, and the old stream stops.
func TestRollOverKeepsTheRunningCard(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, streams, _ := rollingTask(t, 4*time.Minute)
		if tk := streams[0].Tasks; len(tk) != 1 || tk[0].Status != "complete" || tk[0].Output != "web-1 · exit 0" {
			t.Errorf("the first stream's cards %+v; want call-1 complete, with its output", tk)
		}
		for _, m := range streams[1:] {
			if len(m.Tasks) > 0 {
				t.Errorf("message %s shows cards %+v; want the card only where it started", m.TS, m.Tasks)
			}
		}
	})
}

// A command that outlives the stream its card started in: the old
// stream stops before the platform ends it, its message going on by edits
// with the card as a block (a stopped stream's cards no longer change,
// an edited message's do), and the card ends there with the task's true
// status: one card from start to end, none shown again below.
func TestCardOutlivingItsStreamStaysOneCard(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake, streams, _ := rollingTask(t, 7*time.Minute)
		if tk := streams[0].Tasks; len(tk) != 1 || tk[0].Status != "complete" || tk[0].Details != "" || tk[0].Output != "web-1 · exit 0" {
			t.Errorf("the first message's cards %+v; want call-1 complete, with its output", tk)
		}
		for _, m := range streams[1:] {
			if len(m.Tasks) > 0 {
				t.Errorf("message %s shows cards %+v; want the card only where it started", m.TS, m.Tasks)
			}
		}
		if got := fake.Refusals("streaming_state_conflict"); got != 0 {
			t.Errorf("%d edits refused as streaming_state_conflict; want the stream stopped before its edit", got)
		}
	})
}
