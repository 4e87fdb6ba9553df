package slack_test

import (
	"context"
	"io"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/opsbot/opsbot/bot/render"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/slack"
	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

// stopButton is the bot's Stop button (bot.ActionStop).
var stopButton = connectors.Button{ActionID: "stop", Value: "thread", Label: "Stop", Style: connectors.StyleDanger}

// runningRenderer is a renderer with a Stop button answering U0ALICE's
// mention in C0OPS, over an in-process fake Slack with native streaming
// on; it returns the thread's root.
func runningRenderer(t *testing.T) (*slackfake.Server, *render.Renderer, string) {
	t.Helper()
	fake, c := localConn(t, slack.Config{})
	root := fake.Mention("C0OPS", "U0ALICE", "", "run local sleep 600")
	dest := connectors.Dest{Platform: slack.Platform, Workspace: slackfake.Team, Channel: "C0OPS", Thread: root.TS,
		Recipient: connectors.User{ID: "U0ALICE"}}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	r := render.NewRenderer(context.Background(), c, render.NewEditBudget(c.Limits().EditsPerMinute), nil, log, dest, stopButton)
	return fake, r, root.TS
}

// answerOf is the bot's one message in the thread.
func answerOf(t *testing.T, fake *slackfake.Server, thread string) slackfake.Message {
	t.Helper()
	msgs := fake.Thread("C0OPS", thread)[1:]
	if len(msgs) != 1 {
		t.Fatalf("the thread holds %d answers; want 1:\n%s", len(msgs), fake.ThreadText("C0OPS", thread))
	}
	return msgs[0]
}

// sentBlocks reports whether a request the fake received carried blocks
// holding every one of want.
func sentBlocks(fake *slackfake.Server, want ...string) bool {
	return slices.ContainsFunc(fake.Sent(), func(body string) bool {
		form, err := url.ParseQuery(body)
		blocks := form.Get("blocks")
		return err == nil && !slices.ContainsFunc(want, func(w string) bool { return !strings.Contains(blocks, w) })
	})
}

// A command that prints nothing for its whole run: from the moment it
// starts, and for as long as it runs, the thread shows "running `cmd` on
// host…" and Stop (a native stream would show neither until it stopped:
// Slack shows a stream's blocks only from chat.stopStream).
func TestSilentCommandShowsRunningLineAndStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake, r, thread := runningRenderer(t)
		const running = "running `sleep 600` on local…"
		r.Status(running, false)
		synctest.Wait()
		time.Sleep(9 * time.Minute) // past a native stream's lifetime: still shown
		synctest.Wait()
		m := answerOf(t, fake, thread)
		if m.Context() != running || !slices.Equal(m.Buttons(), []string{"stop"}) || m.Streaming {
			t.Errorf("while the command runs the answer shows context %q, buttons %v, streaming %v; want %q and Stop, posted",
				m.Context(), m.Buttons(), m.Streaming, running)
		}
		if !sentBlocks(fake, running, `"action_id":"stop"`) {
			t.Errorf("no request to Slack carried the running line and Stop; sent:\n%s", strings.Join(fake.Sent(), "\n"))
		}
		r.Replace("_(no output)_")
		r.Status("⏹ `sleep 600` on local: stopped by @alice", true)
		r.Close(context.Background(), nil)
		m = answerOf(t, fake, thread)
		if m.Shown() != "_(no output)_" || !strings.HasPrefix(m.Context(), "⏹") || len(m.Buttons()) != 0 {
			t.Errorf("the answer ends showing %q, context %q, buttons %v", m.Shown(), m.Context(), m.Buttons())
		}
		if n := fake.Calls("chat.startStream"); n != 0 {
			t.Errorf("%d native streams for a message that opened with a status line", n)
		}
	})
}

// An answer streaming natively when a command starts: the stream stops at
// once showing its words, the running line and Stop; what follows goes on
// by chat.update, and the answer ends complete, no update ever sent to a
// live stream.
func TestCommandMidStreamShowsRunningLineAndStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake, r, thread := runningRenderer(t)
		r.Write("Let me look at the disk. ")
		synctest.Wait()
		if m := answerOf(t, fake, thread); !m.Streaming || m.Shown() != "Let me look at the disk. " {
			t.Fatalf("the answer's first words: %q, streaming %v; want a native stream", m.Shown(), m.Streaming)
		}
		const running = "running `df -h` on local…"
		r.Status(running, false)
		time.Sleep(2 * time.Second) // one edit interval
		synctest.Wait()
		m := answerOf(t, fake, thread)
		if m.Streaming || m.Shown() != "Let me look at the disk. " || m.Context() != running || !slices.Equal(m.Buttons(), []string{"stop"}) {
			t.Errorf("while the command runs: %q, context %q, buttons %v, streaming %v; want the words, %q and Stop",
				m.Shown(), m.Context(), m.Buttons(), m.Streaming, running)
		}
		r.Write("It is 40% full.")
		r.Status("✓ `df -h` on local: exit 0", true)
		r.Close(context.Background(), nil)
		m = answerOf(t, fake, thread)
		if m.Shown() != "Let me look at the disk. It is 40% full." || m.Context() != "✓ `df -h` on local: exit 0" || len(m.Buttons()) != 0 {
			t.Errorf("the answer ends showing %q, context %q, buttons %v", m.Shown(), m.Context(), m.Buttons())
		}
		for _, code := range []string{"streaming_state_conflict", "message_not_in_streaming_state", "invalid_blocks"} {
			if n := fake.Refusals(code); n > 0 {
				t.Errorf("Slack refused %d calls with %s", n, code)
			}
		}
	})
}
