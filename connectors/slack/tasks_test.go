package slack_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/slack-go/slack"

	"github.com/opsbot/opsbot/connectors"
	opslack "github.com/opsbot/opsbot/connectors/slack"
	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

// A scripted turn whose commands start before its first words, between
// them, and fail: each command is a task card in the answer's stream,
// shown in progress within a second of its start, and ends with its own
// final status; the answer's text is whole.
func TestEveryCommandHasItsTaskCard(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake, c := localConn(t, opslack.Config{})
		root := fake.Mention("C0OPS", "U0ALICE", "", "why is web slow")
		dest := connectors.Dest{Platform: opslack.Platform, Workspace: slackfake.Team, Channel: "C0OPS", Thread: root.TS,
			Recipient: connectors.User{ID: "U0ALICE"}}
		ctx := context.Background()
		r := answerOn(ctx, c, dest)
		card := func(id string) slackfake.Task {
			for _, m := range fake.Thread("C0OPS", root.TS)[1:] {
				for _, tk := range m.Tasks {
					if tk.ID == id {
						return tk
					}
				}
			}
			return slackfake.Task{}
		}
		script := []struct {
			id, text string
			fail     bool
		}{{"call-1", "", false}, {"call-2", "Load is high. ", true}, {"call-3", "Checking disks. ", false}}
		for _, s := range script {
			r.Write(s.text)
			if !r.Task(connectors.Task{ID: s.id, Title: "uptime on web-1", Status: connectors.TaskInProgress}) {
				t.Fatal("the Slack connector shows no task cards")
			}
			time.Sleep(time.Second)
			synctest.Wait()
			if got := card(s.id); got.Status != "in_progress" {
				t.Errorf("%s a second after it started shows %q; want in_progress", s.id, got.Status)
			}
			time.Sleep(3 * time.Second)
			end := connectors.Task{ID: s.id, Title: "`uptime` on web-1", Status: connectors.TaskComplete, Output: "web-1 · exit 0 · 1.2s"}
			if s.fail {
				end.Status, end.Output = connectors.TaskError, "web-1 · exit 1 · 0.3s"
			}
			r.Task(end)
		}
		r.Write("Done.")
		r.Close(ctx, nil)
		for _, s := range script {
			want := "complete"
			if s.fail {
				want = "error"
			}
			if got := card(s.id); got.Status != want || got.Output == "" {
				t.Errorf("%s ends %q with output %q; want %s with its host, exit code and duration", s.id, got.Status, got.Output, want)
			}
		}
		if got := fake.Thread("C0OPS", root.TS)[1].Shown(); got != "Load is high. Checking disks. Done." {
			t.Errorf("the answer shows %q", got)
		}
		if n := fake.Served429(); n != 0 {
			t.Errorf("%d × 429", n)
		}
	})
}

// The fake refuses what Slack refuses: a task status Slack does not
// document ("completed"), a chunk type it does not know.
func TestFakeRefusesInvalidChunks(t *testing.T) {
	fake := slackfake.New()
	defer fake.Close()
	api := slack.New(slackfake.BotToken, slack.OptionAPIURL(fake.URL))
	root := fake.Mention("D0ALICE", "U0ALICE", "", "hi")
	_, ts, err := api.StartStream("D0ALICE", slack.MsgOptionTS(root.TS))
	if err != nil {
		t.Fatal(err)
	}
	bad := slack.NewTaskUpdateChunk("t1", "uptime")
	bad.Status = "completed"
	for name, chunk := range map[string]slack.StreamChunk{"status completed": bad, "unknown type": oddChunk{Type: "progress_bar"}} {
		_, _, err := api.AppendStream("D0ALICE", ts, slack.MsgOptionChunks(chunk))
		if err == nil || err.Error() != "invalid_chunks" {
			t.Errorf("%s: Slack answers %v; want invalid_chunks", name, err)
		}
	}
}

// oddChunk is a chunk of a type Slack does not have.
type oddChunk struct {
	Type slack.StreamChunkType `json:"type"`
}

func (c oddChunk) ChunkType() slack.StreamChunkType { return c.Type }

// An answer whose placeholder came before any task (a model slower than
// the placeholder's 2 s) is a native stream: each task is a card in it
// within a second of its start, not a status line.
func TestTasksAfterThePlaceholderAreCards(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake, c := localConn(t, opslack.Config{})
		root := fake.Mention("C0OPS", "U0ALICE", "", "why is web slow")
		dest := connectors.Dest{Platform: opslack.Platform, Workspace: slackfake.Team, Channel: "C0OPS", Thread: root.TS,
			Recipient: connectors.User{ID: "U0ALICE"}}
		ctx := context.Background()
		stop := connectors.Button{ActionID: "stop", Label: "Stop"}
		r := answerOn(ctx, c, dest, stop)
		time.Sleep(3 * time.Second) // the placeholder shows
		synctest.Wait()
		if msgs := fake.Thread("C0OPS", root.TS); len(msgs) != 2 || !msgs[1].Streaming {
			t.Fatalf("3 s in, the thread is %d messages; want the placeholder's stream", len(msgs))
		}
		r.Task(connectors.Task{ID: "call-1", Title: "uptime on web-1", Status: connectors.TaskInProgress})
		time.Sleep(time.Second)
		synctest.Wait()
		answer := fake.Thread("C0OPS", root.TS)[1]
		if len(answer.Tasks) != 1 || answer.Tasks[0].Status != "in_progress" {
			t.Errorf("a second after the task started the placeholder shows cards %+v; want it in_progress", answer.Tasks)
		}
		r.Task(connectors.Task{ID: "call-1", Title: "`uptime` on web-1", Status: connectors.TaskComplete, Output: "web-1 · exit 0 · 1.2s"})
		time.Sleep(2 * time.Second)
		r.Write("Load is fine.")
		r.Close(ctx, nil)
		msgs := fake.Thread("C0OPS", root.TS)[1:]
		last := msgs[len(msgs)-1]
		if len(msgs) != 1 || len(last.Tasks) != 1 || last.Tasks[0].Status != "complete" || last.Context() != "" || last.Shown() != "Load is fine." {
			t.Errorf("the answer is %d messages, the last showing %q with context %q and cards %+v; want one, its text and the card complete",
				len(msgs), last.Shown(), last.Context(), last.Tasks)
		}
	})
}

// An answer that began as a post (it opened with a wait for approval,
// shown at once with Stop) shows its command's card in the post itself,
// above its words, ending complete: one message, no stream beside it.
func TestTasksOfAPostedAnswerShowInThePost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake, c := localConn(t, opslack.Config{})
		root := fake.Mention("C0OPS", "U0ALICE", "", "why is web slow")
		dest := connectors.Dest{Platform: opslack.Platform, Workspace: slackfake.Team, Channel: "C0OPS", Thread: root.TS,
			Recipient: connectors.User{ID: "U0ALICE"}}
		ctx := context.Background()
		stop := connectors.Button{ActionID: "stop", Label: "Stop"}
		r := answerOn(ctx, c, dest, stop)
		r.Waiting("waiting for approval to run `uptime` on web-1")
		time.Sleep(3 * time.Second) // the wait posts
		synctest.Wait()
		if msgs := fake.Thread("C0OPS", root.TS); len(msgs) != 2 || msgs[1].Streaming {
			r.Close(ctx, nil)
			t.Fatalf("the wait shows in %d messages; want one post", len(msgs)-1)
		}
		r.Task(connectors.Task{ID: "call-1", Title: "uptime on web-1", Status: connectors.TaskInProgress})
		time.Sleep(2 * time.Second)
		r.Task(connectors.Task{ID: "call-1", Title: "`uptime` on web-1", Status: connectors.TaskComplete, Output: "web-1 · exit 0 · 1.2s"})
		time.Sleep(2 * time.Second)
		r.Write("Load is fine.")
		r.Close(ctx, nil)
		msgs := fake.Thread("C0OPS", root.TS)[1:]
		if len(msgs) != 1 {
			t.Fatalf("the answer is %d messages; want the post alone:\n%s", len(msgs), fake.ThreadText("C0OPS", root.TS))
		}
		post := msgs[0]
		if post.Shown() != "Load is fine." || post.Context() != "" || len(post.Tasks) != 1 || post.Tasks[0].Status != "complete" || post.Tasks[0].Title != "`uptime` on web-1" {
			t.Errorf("the post shows %q (context %q) and cards %+v; want its text and the command's card, complete", post.Shown(), post.Context(), post.Tasks)
		}
		if got := fake.Calls("chat.startStream"); got != 0 {
			t.Errorf("%d chat.startStream calls; want none", got)
		}
	})
}

// A task still running 5 s after it started, in an answer with Stop:
// its card alone would leave no Stop in view (a live stream shows no
// buttons), so its line and Stop show in a message of their own below
// the stream, which goes on holding the card; the card ends with the
// task's own end, and the message below loses Stop when the answer ends.
func TestLongTaskShowsStopBelowItsStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake, c := localConn(t, opslack.Config{})
		root := fake.Mention("C0OPS", "U0ALICE", "", "wait a while")
		dest := connectors.Dest{Platform: opslack.Platform, Workspace: slackfake.Team, Channel: "C0OPS", Thread: root.TS,
			Recipient: connectors.User{ID: "U0ALICE"}}
		ctx := context.Background()
		stop := connectors.Button{ActionID: "stop", Label: "Stop"}
		r := answerOn(ctx, c, dest, stop)
		r.Task(connectors.Task{ID: "call-1", Title: "running `sleep 600` on local…", Status: connectors.TaskInProgress})
		time.Sleep(3 * time.Second)
		synctest.Wait()
		if msgs := fake.Thread("C0OPS", root.TS); len(msgs) != 2 || len(msgs[1].Tasks) != 1 || len(msgs[1].Buttons()) != 0 {
			t.Fatalf("3 s in the thread shows:\n%s\nwant the card alone", fake.ThreadText("C0OPS", root.TS))
		}
		time.Sleep(4 * time.Second)
		synctest.Wait()
		msgs := fake.Thread("C0OPS", root.TS)
		if len(msgs) != 3 || !msgs[1].Streaming || msgs[2].Context() != "running `sleep 600` on local…" || len(msgs[2].Buttons()) != 1 {
			t.Fatalf("7 s in the thread shows:\n%s\nwant the stream going on, and below it the running line and Stop", fake.ThreadText("C0OPS", root.TS))
		}
		r.Task(connectors.Task{ID: "call-1", Title: "`sleep 600` on local", Status: connectors.TaskError, Details: "stopped by @alice"})
		r.Close(ctx, nil)
		msgs = fake.Thread("C0OPS", root.TS)
		if tk := msgs[1].Tasks; len(tk) != 1 || tk[0].Status != "error" || tk[0].Details != "stopped by @alice" {
			t.Errorf("the stream's card ends %+v; want the task's own end", tk)
		}
		if msgs[1].Streaming || len(msgs[2].Buttons()) != 0 {
			t.Errorf("the answer ends streaming %v, Stop below it %v; want stopped, and no Stop", msgs[1].Streaming, msgs[2].Buttons())
		}
		for _, m := range fake.StoppedOpen() {
			t.Errorf("message %s stopped with cards still open: %+v", m.TS, m.OpenTasks())
		}
	})
}
