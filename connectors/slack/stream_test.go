package slack_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/opsbot/opsbot/bot/render"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/slack"
	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

// localConn is a connector over an in-process fake, for a synctest
// bubble: every request runs on the bubble's clock.
func localConn(t *testing.T, cfg slack.Config) (*slackfake.Server, *slack.Connector) {
	t.Helper()
	fake := slackfake.NewLocal()
	cfg.BotToken, cfg.AppToken, cfg.APIURL = slackfake.BotToken, slackfake.AppToken, fake.URL
	c, err := slack.New(cfg, slack.Options{HTTPClient: &http.Client{Transport: fake.Transport()}})
	if err != nil {
		t.Fatal(err)
	}
	return fake, c
}

// A 6-minute answer outlives a native stream (Slack ends one about 5
// minutes after it starts, whatever is appended): it rolls over to a new
// stream before 4 minutes, no append ever meets an ended stream, and the
// thread ends showing exactly the answer's text.
func TestSixMinuteAnswerRollsOverStreams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake, c := localConn(t, slack.Config{})
		root := fake.Mention("C0OPS", "U0ALICE", "", "watch the deploy")
		dest := connectors.Dest{Platform: slack.Platform, Workspace: slackfake.Team, Channel: "C0OPS", Thread: root.TS,
			Recipient: connectors.User{ID: "U0ALICE"}}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		r := render.NewRenderer(ctx, c, render.NewEditBudget(c.Limits().EditsPerMinute), nil, log, dest)
		var want strings.Builder
		start := time.Now()
		for i := 0; time.Since(start) < 6*time.Minute; i++ {
			d := fmt.Sprintf("%d ", i%10) // short: no page fills before Slack would end the stream
			want.WriteString(d)
			r.Write(d)
			time.Sleep(time.Second)
		}
		r.Close(ctx, nil)
		var shown strings.Builder
		streams := 0
		for _, m := range fake.Thread("C0OPS", root.TS)[1:] {
			shown.WriteString(m.Shown())
			if m.Streaming {
				t.Errorf("message %s still streams after the answer ended", m.TS)
			}
		}
		streams = fake.Calls("chat.startStream")
		if got := shown.String(); got != want.String() {
			t.Errorf("the thread shows %d characters, want %d: the final text must equal the deltas\nend: %q", len(got), want.Len(), got[max(0, len(got)-80):])
		}
		if streams < 2 {
			t.Errorf("%d streams for a 6-minute answer; want a roll-over before Slack ends the first", streams)
		}
		for _, code := range []string{"message_not_in_streaming_state", "streaming_state_conflict", "msg_too_long", "invalid_blocks"} {
			if n := fake.Refusals(code); n > 0 {
				t.Errorf("Slack refused %d calls with %s", n, code)
			}
		}
		if n := fake.Served429(); n > 0 {
			t.Errorf("Slack answered 429 %d times", n)
		}
	})
}

// A stream Slack ends early (a person pressed stop, or its lifetime ran
// out): the answer goes on by chat.update and ends complete; an update is
// never sent to a live stream.
func TestStreamEndedEarlyFinishesByUpdate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake, c := localConn(t, slack.Config{})
		root := fake.Mention("C0OPS", "U0ALICE", "", "check")
		dest := connectors.Dest{Platform: slack.Platform, Workspace: slackfake.Team, Channel: "C0OPS", Thread: root.TS, Recipient: connectors.User{ID: "U0ALICE"}}
		ctx := context.Background()
		r := answerOn(ctx, c, dest)
		r.Write("first part. ")
		time.Sleep(3 * time.Second)
		fake.EndStreams()
		r.Write("second part.")
		time.Sleep(3 * time.Second)
		r.Close(ctx, nil)
		msgs := fake.Thread("C0OPS", root.TS)[1:]
		if len(msgs) != 1 || msgs[0].Shown() != "first part. second part." || msgs[0].Updates == 0 {
			t.Errorf("the thread shows %+v; want one message finished by chat.update", msgs)
		}
		if n := fake.Refusals("streaming_state_conflict"); n > 0 {
			t.Errorf("%d chat.update calls hit a live stream", n)
		}
	})
}

// With native streaming off, answers grow by chat.update.
func TestNativeStreamingOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		off := false
		fake, c := localConn(t, slack.Config{NativeStreaming: &off})
		root := fake.Mention("C0OPS", "U0ALICE", "", "check")
		dest := connectors.Dest{Platform: slack.Platform, Channel: "C0OPS", Thread: root.TS, Recipient: connectors.User{ID: "U0ALICE"}}
		ctx := context.Background()
		r := answerOn(ctx, c, dest)
		for i := range 5 {
			r.Write(fmt.Sprintf("line %d\n", i))
			time.Sleep(2 * time.Second)
		}
		r.Close(ctx, nil)
		if fake.Calls("chat.startStream") != 0 || fake.Calls("chat.update") == 0 {
			t.Errorf("startStream %d, update %d; want edits only", fake.Calls("chat.startStream"), fake.Calls("chat.update"))
		}
		if msgs := fake.Thread("C0OPS", root.TS)[1:]; len(msgs) != 1 || msgs[0].Shown() != "line 0\nline 1\nline 2\nline 3\nline 4\n" {
			t.Errorf("the thread shows %+v", msgs)
		}
	})
}

// A crash cuts an answer while Slack still keeps its stream: the new
// process (another connector, recovery's StopStream with the note) ends
// the stream as it stands and updates it — Slack refuses an update to a
// live stream — and the message shows exactly the final text. A stream
// Slack has already ended says so (ErrStreamEnded: recovery edits).
func TestStopOfAStreamAPreviousProcessStarted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake, before := localConn(t, slack.Config{})
		root := fake.Mention("C0OPS", "U0ALICE", "", "check")
		dest := connectors.Dest{Platform: slack.Platform, Workspace: slackfake.Team, Channel: "C0OPS", Thread: root.TS, Recipient: connectors.User{ID: "U0ALICE"}}
		ctx := context.Background()
		refs := make([]connectors.Ref, 2)
		for i := range refs {
			ref, err := before.StartStream(ctx, dest, connectors.Message{Text: "Checking the di"})
			if err != nil {
				t.Fatal(err)
			}
			refs[i] = ref
		}
		after, err := slack.New(slack.Config{BotToken: slackfake.BotToken, AppToken: slackfake.AppToken, APIURL: fake.URL},
			slack.Options{HTTPClient: &http.Client{Transport: fake.Transport()}})
		if err != nil {
			t.Fatal(err)
		}
		final := connectors.Message{Text: "Checking the di\n\n_(interrupted)_"}
		if err := after.StopStream(ctx, refs[0], final); err != nil {
			t.Fatalf("stop of a live stream the new process did not start: %v", err)
		}
		if m, _ := fake.Message("C0OPS", refs[0].ID); m.Streaming || m.Shown() != final.Text {
			t.Errorf("the answer shows %q, streaming %v; want %q, stopped", m.Shown(), m.Streaming, final.Text)
		}
		time.Sleep(slackfake.StreamLifetime)
		if err := after.StopStream(ctx, refs[1], final); !errors.Is(err, connectors.ErrStreamEnded) {
			t.Errorf("stop of a stream Slack ended: %v; want ErrStreamEnded", err)
		}
		if n := fake.Refusals("streaming_state_conflict"); n > 0 {
			t.Errorf("%d updates hit a live stream", n)
		}
	})
}
