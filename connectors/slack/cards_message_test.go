package slack_test

import (
	"context"
	"fmt"
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
	"github.com/opsbot/opsbot/store"
)

// busyDest opens two other answers' streams in the workspace, so that
// native says no to the next answer's stream: it is posted, and goes on
// by edits. It returns the dest of a new question.
func busyDest(t *testing.T, fake *slackfake.Server, c *opslack.Connector) connectors.Dest {
	t.Helper()
	dest := asker(fake)
	for i := range 2 {
		if _, err := c.StartStream(t.Context(), dest(fmt.Sprintf("other %d", i)), connectors.Message{Text: "busy"}); err != nil {
			t.Fatal(err)
		}
	}
	return dest("why is web slow")
}

// An answer posted by edits (native said no) whose commands come before
// its words: each command's end shows in the post's card within a few
// seconds, as the stream's card would, not only once words come.
func TestPostedCardEndsShowWithoutWords(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake, c := localConn(t, opslack.Config{})
		d := busyDest(t, fake, c)
		ctx := context.Background()
		r := answerOn(ctx, c, d)
		defer r.Close(ctx, nil)
		r.Task(connectors.Task{ID: "call-1", Title: "uptime on web-1", Status: connectors.TaskInProgress})
		time.Sleep(3 * time.Second)
		synctest.Wait()
		msgs := fake.Thread("C0OPS", d.Thread)[1:]
		if len(msgs) != 1 || msgs[0].Streaming || len(msgs[0].Tasks) != 1 {
			t.Fatalf("the answer is not one post with its card:\n%s", fake.ThreadText("C0OPS", d.Thread))
		}
		r.Task(connectors.Task{ID: "call-1", Title: "`uptime` on web-1", Status: connectors.TaskComplete, Output: "web-1 · exit 0 · 1.2s"})
		r.Task(connectors.Task{ID: "call-2", Title: "`df -h` on web-1", Status: connectors.TaskInProgress})
		time.Sleep(10 * time.Second)
		synctest.Wait()
		post := fake.Thread("C0OPS", d.Thread)[1]
		if len(post.Tasks) != 2 || post.Tasks[0].Status != "complete" || post.Tasks[1].Status != "in_progress" {
			t.Errorf("10 s after the first command ended and the second started, the post shows cards %+v; want call-1 complete and call-2 in progress", post.Tasks)
		}
	})
}

// An answer whose stream's roll-over waits for chat.startStream's budget
// when a status line stops its stream (it goes on by edits): the stream
// started for the roll-over is not left in the thread, empty, once the
// answer ends — where messages show cards no card stream is wanted.
func TestLateRollOverLeavesNoEmptyStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake, c := localConn(t, opslack.Config{})
		ctx := context.Background()
		dest := asker(fake)
		d := dest("watch the logs")
		r := answerOn(ctx, c, d)
		start := time.Now()
		writeLines(r, new(strings.Builder), start, 14)
		time.Sleep(time.Until(start.Add(opslack.StreamLifetime/2 - time.Second)))
		var others []connectors.Ref
		for i := range 4 {
			ref, err := c.StartStream(ctx, dest(fmt.Sprintf("other %d", i)), connectors.Message{})
			if err != nil {
				t.Fatal(err)
			}
			others = append(others, ref)
		}
		time.Sleep(time.Until(start.Add(opslack.StreamLifetime/2 + 2*time.Second)))
		synctest.Wait()
		r.Status("running `tail -f` on web-1", false) // the stream stops, the answer goes on by edits
		time.Sleep(time.Minute)                       // the roll-over's start comes meanwhile
		synctest.Wait()
		r.Status("`tail -f` on web-1 done", true)
		r.Write("done.")
		r.Close(ctx, nil)
		for _, ref := range others {
			c.StopStream(ctx, ref, connectors.Message{})
		}
		msgs := fake.Thread("C0OPS", d.Thread)[1:]
		for _, m := range msgs {
			if m.Shown() == "" && len(m.Tasks) == 0 && m.Context() == "" {
				t.Errorf("the thread has an empty message (streaming %v) beside the answer:\n%s", m.Streaming, fake.ThreadText("C0OPS", d.Thread))
			}
		}
		if got := fake.Calls("chat.startStream"); got != 5 {
			t.Logf("%d chat.startStream calls", got)
		}
	})
}

// A stream a kill cut, which Slack then ended, showing a command's card
// ended complete and another's still running: the restart's update (the
// record holds all the stream shows) keeps the ended card as it was and
// closes the running one — it does not drop the cards the read-back
// (conversations.replies) does not return as blocks.
func TestCutEndedStreamKeepsItsEndedCards(t *testing.T) {
	fake := slackfake.NewLocal()
	conn := func() *opslack.Connector { return localConnector(t, fake, nil) }
	root := fake.Mention("C0OPS", "U0ALICE", "", "check the disks")
	d := connectors.Dest{Platform: opslack.Platform, Workspace: slackfake.Team, Channel: "C0OPS", Thread: root.TS, Recipient: connectors.User{ID: "U0ALICE"}}
	killed := conn()
	ref, err := killed.StartStream(t.Context(), d, connectors.Message{Text: "Checking"})
	if err != nil {
		t.Fatal(err)
	}
	done := connectors.Task{ID: "call-1", Title: "`uptime` on web-1", Status: connectors.TaskComplete, Output: "web-1 · exit 0"}
	running := connectors.Task{ID: "call-2", Title: "`df -h` on web-1", Status: connectors.TaskInProgress}
	if err := killed.AppendWithTasks(t.Context(), ref, " the disks", []connectors.Task{done, running}); err != nil {
		t.Fatal(err)
	}
	fake.EndStreams()
	open := []connectors.Task{{ID: "call-2", Title: running.Title, Status: connectors.TaskError, Details: "interrupted by a restart"}}
	if err := conn().EndCutAnswer(t.Context(), ref, "Checking the disks", cutNote, open, "57"); err != nil {
		t.Fatalf("EndCutAnswer: %v", err)
	}
	m, _ := fake.Message("C0OPS", ref.ID)
	status := map[string]string{}
	for _, tk := range m.Tasks {
		status[tk.ID] = tk.Status
	}
	if status["call-1"] != "complete" || status["call-2"] != "error" {
		t.Errorf("after the restart the message shows cards %+v; want call-1 complete and call-2 closed as an error", m.Tasks)
	}
}

// An answer with Stop whose command comes first and runs long, posted
// by edits (native said no): the post shows Stop itself, as any answer
// by edits does, so no control message is posted below it — the answer
// is one message.
func TestPostedAnswerWithLongCommandHasNoControlMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake, c := localConn(t, opslack.Config{})
		d := busyDest(t, fake, c)
		ctx := context.Background()
		stop := connectors.Button{ActionID: "stop", Label: "Stop"}
		r := answerOn(ctx, c, d, stop)
		r.Task(connectors.Task{ID: "call-1", Title: "`deploy --wait` on web-1", Status: connectors.TaskInProgress})
		time.Sleep(20 * time.Second)
		synctest.Wait()
		during := fake.ThreadText("C0OPS", d.Thread)
		r.Task(connectors.Task{ID: "call-1", Title: "`deploy --wait` on web-1", Status: connectors.TaskComplete, Output: "web-1 · exit 0"})
		r.Write("Deployed.")
		r.Close(ctx, nil)
		if msgs := fake.Thread("C0OPS", d.Thread)[1:]; len(msgs) != 1 {
			t.Errorf("the answer is %d messages; want its post alone. While the command ran:\n%s\nat the end:\n%s", len(msgs), during, fake.ThreadText("C0OPS", d.Thread))
		}
	})
}

// A process killed while the first command of an answer runs, before its
// first words: the stream opened with the command's card (in
// chat.startStream's chunks) has that card on record as open, so that
// the next one's recovery closes it in the stop — a card is on record
// before it is sent open, whichever call sends it.
func TestCardInTheStartIsOnRecord(t *testing.T) {
	for _, words := range []string{"", "Deploying. "} {
		t.Run(map[bool]string{true: "card first", false: "words and card"}[words == ""], func(t *testing.T) { cardInTheStart(t, words) })
	}
}

func cardInTheStart(t *testing.T, words string) {
	synctest.Test(t, func(t *testing.T) {
		fake, c := localConn(t, opslack.Config{})
		root := fake.Mention("C0OPS", "U0ALICE", "", "check web")
		dest := connectors.Dest{Platform: opslack.Platform, Workspace: slackfake.Team, Channel: "C0OPS", Thread: root.TS,
			Recipient: connectors.User{ID: "U0ALICE"}}
		rec := &memRecorder{open: map[int64]store.PostedMessage{}}
		ctx, kill := context.WithCancel(context.Background())
		r := render.NewRenderer(ctx, c, render.NewEditBudget(c.Limits().EditsPerMinute), rec, slog.New(slog.NewTextHandler(io.Discard, nil)), dest)
		r.Write(words)
		r.Task(connectors.Task{ID: "call-1", Title: "`deploy --wait` on web-1", Status: connectors.TaskInProgress})
		time.Sleep(3 * time.Second)
		synctest.Wait()
		if msgs := fake.Thread("C0OPS", root.TS)[1:]; len(msgs) != 1 || !msgs[0].Streaming || len(msgs[0].Tasks) != 1 {
			t.Fatalf("want one stream showing the command's card:\n%s", fake.ThreadText("C0OPS", root.TS))
		}
		kill()
		synctest.Wait()
		rec.mu.Lock()
		var left []store.PostedMessage
		for _, m := range rec.open {
			left = append(left, m)
		}
		rec.mu.Unlock()
		if len(left) != 1 || len(left[0].Cards) != 1 || left[0].Cards[0].ID != "call-1" {
			t.Errorf("on record: %+v; want the stream with call-1's card open", left)
		}
	})
}

// postedCut leaves, on a fake Slack, an answer a killed process was
// writing by edits: a post showing text and a command's card in
// progress (a task_card block). It returns the fake, a fresh connector
// and the post.
func postedCut(t *testing.T, text string) (*slackfake.Server, *opslack.Connector, connectors.Ref) {
	t.Helper()
	fake := slackfake.NewLocal()
	conn := func() *opslack.Connector { return localConnector(t, fake, nil) }
	root := fake.Mention("C0OPS", "U0ALICE", "", "deploy web")
	d := connectors.Dest{Platform: opslack.Platform, Workspace: slackfake.Team, Channel: "C0OPS", Thread: root.TS, Recipient: connectors.User{ID: "U0ALICE"}}
	ref, err := conn().Post(t.Context(), d, connectors.Message{Text: text,
		Tasks: []connectors.Task{{ID: "call-1", Title: "`deploy --wait` on web-1", Status: connectors.TaskInProgress}}})
	if err != nil {
		t.Fatal(err)
	}
	return fake, conn(), ref
}

// cutOpen is call-1's card as bot's recovery closes it (cutCards).
var cutOpen = []connectors.Task{{ID: "call-1", Title: "`deploy --wait` on web-1", Status: connectors.TaskError,
	Details: "interrupted by a restart", Output: "opsbot restarted while this ran; whether it finished is not known — check before running it again"}}

// A posted answer cut by a kill, its command's card in progress: the
// restart closes the card saying what recovery knows (the task's end is
// not known: check before running it again), as it does in a stream's
// stop — not that it did not finish.
func TestCutPostedCardSaysRestart(t *testing.T) {
	fake, c, ref := postedCut(t, "Deploying.")
	if err := c.EndCutAnswer(t.Context(), ref, "Deploying.", cutNote, cutOpen, "57"); err != nil {
		t.Fatalf("EndCutAnswer: %v", err)
	}
	m, _ := fake.Message("C0OPS", ref.ID)
	if len(m.Tasks) != 1 || m.Tasks[0].Status != "error" || m.Tasks[0].Output != cutOpen[0].Output || m.Tasks[0].Details != cutOpen[0].Details {
		t.Errorf("after the restart the post's card is %+v; want it closed as recovery says: %+v", m.Tasks, cutOpen[0])
	}
}

// A posted answer cut by a kill whose record is behind what it shows
// (the process died between an edit and its record): the note goes
// below, and the card the post shows in progress is closed all the same
// — never left spinning for good.
func TestCutPostedCardClosedWhenRecordBehind(t *testing.T) {
	fake, c, ref := postedCut(t, "Deploying web-1 now.")
	if err := c.EndCutAnswer(t.Context(), ref, "Deploying", cutNote, cutOpen, "57"); err != nil {
		t.Fatalf("EndCutAnswer: %v", err)
	}
	for _, m := range fake.Thread("C0OPS", ref.Thread) {
		for _, tk := range m.Tasks {
			if tk.Status == "in_progress" || tk.Status == "pending" {
				t.Errorf("message %s still shows %s %s after the restart:\n%s", m.TS, tk.ID, tk.Status, fake.ThreadText("C0OPS", ref.Thread))
			}
		}
	}
}

// In an assistant thread, an answer that opened as a post (a wait for
// approval, shown with Stop) runs its command: the thread's status says
// what runs ("is running …"), as it does for a command whose card is in
// a stream — its card being in the post changes nothing of that.
func TestPostedAnswersCommandShowsInTheStatus(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := slackfake.NewLocal()
		ev := question(fake, "D0ALICE", "deploy web-1")
		c := localConnector(t, fake, knownThreads{"D0ALICE/" + ev.Thread: true})
		c.Acknowledge(t.Context(), ev)
		synctest.Wait()
		d := connectors.Dest{Platform: opslack.Platform, Workspace: slackfake.Team, Channel: "D0ALICE", Thread: ev.Thread, Recipient: connectors.User{ID: "U04ALICE"}}
		ctx := context.Background()
		r := answerOn(ctx, c, d, stopButton)
		r.Waiting("waiting for approval to run `deploy --wait` on web-1")
		time.Sleep(3 * time.Second)
		synctest.Wait()
		r.Task(connectors.Task{ID: "call-1", Title: "`deploy --wait` on web-1", Status: connectors.TaskInProgress})
		r.Write("Deploying. ") // words with it: the post's edit shows the card
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if m := fake.Thread("D0ALICE", ev.Thread)[1]; len(m.Tasks) != 1 {
			t.Fatalf("the post shows cards %+v; want the command's", m.Tasks)
		}
		var shown []string
		running := false
		for _, s := range fake.Statuses() {
			shown = append(shown, s.Status)
			running = running || s.Status == "is running `deploy --wait` on web-1…"
		}
		if !running {
			t.Errorf("the thread's statuses %q; want the command shown as running\n%s", shown, fake.ThreadText("D0ALICE", ev.Thread))
		}
		r.Task(connectors.Task{ID: "call-1", Status: connectors.TaskComplete, Output: "web-1 · exit 0"})
		r.Write("Deployed.")
		r.Close(ctx, nil)
		c.Done(t.Context(), ev)
	})
}

// An answer that opened as a post with a wait for approval, whose
// command then runs before any words: within a few seconds the post
// shows the command's card and no longer says it waits for approval.
func TestPostedWaitGivesWayToTheCard(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake, c := localConn(t, opslack.Config{})
		root := fake.Mention("C0OPS", "U0ALICE", "", "deploy web-1")
		d := connectors.Dest{Platform: opslack.Platform, Workspace: slackfake.Team, Channel: "C0OPS", Thread: root.TS, Recipient: connectors.User{ID: "U0ALICE"}}
		ctx := context.Background()
		r := answerOn(ctx, c, d, stopButton)
		defer r.Close(ctx, nil)
		r.Waiting("waiting for approval to run `deploy --wait` on web-1")
		time.Sleep(3 * time.Second)
		synctest.Wait()
		r.Task(connectors.Task{ID: "call-1", Title: "`deploy --wait` on web-1", Status: connectors.TaskInProgress})
		time.Sleep(5 * time.Second)
		synctest.Wait()
		post := fake.Thread("C0OPS", root.TS)[1]
		if len(post.Tasks) != 1 || post.Tasks[0].Status != "in_progress" || post.Context() != "" {
			t.Errorf("5 s after the approved command started, the post shows context %q and cards %+v; want the card in progress and no wait:\n%s",
				post.Context(), post.Tasks, fake.ThreadText("C0OPS", root.TS))
		}
	})
}

// A posted answer (native said no) whose first command runs long while
// twenty quick ones run after it: the message still shows the long
// command's card, running — a card still open is not pushed out of the
// message by newer ones that have ended (Slack's 50 blocks leave room
// for no more than maxMessageCards).
func TestOpenCardStaysAmongManyCards(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake, c := localConn(t, opslack.Config{})
		d := busyDest(t, fake, c)
		ctx := context.Background()
		r := answerOn(ctx, c, d)
		defer r.Close(ctx, nil)
		r.Write("Deploying, then checking every host. ")
		r.Task(connectors.Task{ID: "call-0", Title: "`deploy --wait` on web-1", Status: connectors.TaskInProgress})
		time.Sleep(2 * time.Second)
		for k := 1; k <= 20; k++ {
			id := fmt.Sprintf("call-%d", k)
			title := fmt.Sprintf("`uptime` on web-%d", k)
			r.Task(connectors.Task{ID: id, Title: title, Status: connectors.TaskInProgress})
			time.Sleep(time.Second)
			r.Task(connectors.Task{ID: id, Title: title, Status: connectors.TaskComplete, Output: "exit 0"})
			r.Write(fmt.Sprintf("web-%d is up. ", k))
			time.Sleep(time.Second)
		}
		time.Sleep(5 * time.Second)
		synctest.Wait()
		post := fake.Thread("C0OPS", d.Thread)[1]
		if post.Streaming {
			t.Fatalf("the answer streams; want it posted by edits")
		}
		found := false
		for _, tk := range post.Tasks {
			found = found || (tk.ID == "call-0" && tk.Status == "in_progress")
		}
		if !found {
			t.Errorf("the post shows %d cards, call-0's not among them; want the running deploy's card kept", len(post.Tasks))
		}
	})
}
