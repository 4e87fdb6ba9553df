package slack_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/slack"
	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

const cutNote = "\n\n_(interrupted)_"

// cutAnswer leaves, on a fake Slack, the message of an answer a killed
// process was writing: a native stream showing "Checking the disks"
// (ended by Slack when ended is set), or a message going on by edits
// showing it. It returns the fake, a fresh connector (the restarted
// process, knowing nothing of it) and the message.
func cutAnswer(t *testing.T, stream, ended bool) (*slackfake.Server, *slack.Connector, connectors.Ref) {
	t.Helper()
	fake := slackfake.NewLocal()
	conn := func() *slack.Connector {
		c, err := slack.New(slack.Config{BotToken: slackfake.BotToken, AppToken: slackfake.AppToken, APIURL: fake.URL},
			slack.Options{HTTPClient: &http.Client{Transport: fake.Transport()}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	root := fake.Mention("C0OPS", "U0ALICE", "", "check the disks")
	d := connectors.Dest{Platform: slack.Platform, Workspace: slackfake.Team, Channel: "C0OPS", Thread: root.TS, Recipient: connectors.User{ID: "U0ALICE"}}
	killed := conn()
	var ref connectors.Ref
	var err error
	if stream {
		ref, err = killed.StartStream(t.Context(), d, connectors.Message{Text: "Checking"})
		if err == nil {
			err = killed.AppendStream(t.Context(), ref, " the disks")
		}
	} else {
		ref, err = killed.Post(t.Context(), d, connectors.Message{Text: "Checking the disks"})
	}
	if err != nil {
		t.Fatal(err)
	}
	if ended {
		fake.EndStreams()
	}
	return fake, conn(), ref
}

// After a kill, the next process ends the answer it cut with the note and
// never shows less than was shown: a live stream is stopped carrying the
// note (Slack refuses chat.update on it); a message that no longer
// streams is updated from the record when the record holds all it shows,
// and gets the note below it when the record is behind.
func TestEndCutNeverShortens(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		stream, ended  bool
		stored         string
		shown, noteMsg string // "": no note message
	}{
		{name: "live stream, record behind", stream: true, stored: "Check", shown: "Checking the disks" + cutNote},
		{name: "ended stream, record behind", stream: true, ended: true, stored: "Checking", shown: "Checking the disks", noteMsg: "_(interrupted)_"},
		{name: "ended stream, record whole", stream: true, ended: true, stored: "Checking the disks", shown: "Checking the disks" + cutNote},
		{name: "edited message, record behind", stored: "Checking the", shown: "Checking the disks", noteMsg: "_(interrupted)_"},
		{name: "edited message, record whole", stored: "Checking the disks", shown: "Checking the disks" + cutNote},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake, c, ref := cutAnswer(t, tc.stream, tc.ended)
			if err := c.EndCut(t.Context(), ref, tc.stored, cutNote); err != nil {
				t.Fatalf("EndCut: %v", err)
			}
			thread := fake.Thread("C0OPS", ref.Thread)
			m, _ := fake.Message("C0OPS", ref.ID)
			if m.Streaming {
				t.Errorf("the message still streams")
			}
			if got := m.Shown(); got != tc.shown {
				t.Errorf("the answer shows %q, want %q", got, tc.shown)
			}
			last := thread[len(thread)-1]
			switch {
			case tc.noteMsg == "" && last.TS != ref.ID:
				t.Errorf("a message was added below the answer: %q", last.Shown())
			case tc.noteMsg != "" && (last.TS == ref.ID || last.Shown() != tc.noteMsg):
				t.Errorf("the note below the answer: %q, want %q", last.Shown(), tc.noteMsg)
			}
			if n := fake.Refusals("streaming_state_conflict"); n > 0 {
				t.Errorf("%d updates hit a live stream", n)
			}
		})
	}
}

// The fake refuses chat.update on a live stream as Slack does, so a
// recovery that edits before it stops is caught.
func TestFakeRefusesUpdateOnLiveStream(t *testing.T) {
	t.Parallel()
	fake, c, ref := cutAnswer(t, true, false)
	err := c.Edit(t.Context(), ref, connectors.Message{Text: "Checking the disks" + cutNote})
	if err == nil || fake.Refusals("streaming_state_conflict") != 1 {
		t.Errorf("an update of a live stream another process started: %v, %d refusals", err, fake.Refusals("streaming_state_conflict"))
	}
}

// A stream a killed process started and never recorded (its id unknown):
// the next process finds it among the bot's newest messages in the
// thread, and stops it with the note; the bot's finished messages there
// are left as they are.
func TestEndCutInStopsTheUnrecordedStream(t *testing.T) {
	t.Parallel()
	fake, c, ref := cutAnswer(t, true, false)
	d := connectors.Dest{Platform: slack.Platform, Channel: "C0OPS", Thread: ref.Thread}
	ended, err := c.EndCutIn(t.Context(), d, cutNote)
	if err != nil || !ended {
		t.Fatalf("EndCutIn: ended %v, %v", ended, err)
	}
	if m, _ := fake.Message("C0OPS", ref.ID); m.Streaming || m.Shown() != "Checking the disks"+cutNote {
		t.Errorf("the stream shows %q (streaming %v)", m.Shown(), m.Streaming)
	}
	if ended, err := c.EndCutIn(t.Context(), d, cutNote); ended || err != nil {
		t.Errorf("a second EndCutIn ended %v (%v): nothing streams any more", ended, err)
	}
	if m, _ := fake.Message("C0OPS", ref.ID); m.Shown() != "Checking the disks"+cutNote {
		t.Errorf("the answer shows %q after a second EndCutIn", m.Shown())
	}
}

// An answer's last words go by chat.appendStream (Tier 4), shown at once;
// chat.stopStream (Tier 2, the workspace's scarcest budget) carries only
// the blocks below them.
func TestStopStreamSendsTheTailByAppend(t *testing.T) {
	t.Parallel()
	fake, _, _ := cutAnswer(t, false, false)
	c, err := slack.New(slack.Config{BotToken: slackfake.BotToken, AppToken: slackfake.AppToken, APIURL: fake.URL},
		slack.Options{HTTPClient: &http.Client{Transport: fake.Transport()}})
	if err != nil {
		t.Fatal(err)
	}
	root := fake.Mention("C0OPS", "U0ALICE", "", "how are the disks?")
	d := connectors.Dest{Platform: slack.Platform, Workspace: slackfake.Team, Channel: "C0OPS", Thread: root.TS, Recipient: connectors.User{ID: "U0ALICE"}}
	ref, err := c.StartStream(t.Context(), d, connectors.Message{Text: "Disks"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.StopStream(t.Context(), ref, connectors.Message{Text: "Disks are fine.", Context: "✓ df -h"}); err != nil {
		t.Fatal(err)
	}
	m, _ := fake.Message("C0OPS", ref.ID)
	if m.Streaming || m.Shown() != "Disks are fine." || m.Context() != "✓ df -h" || m.Appends != 1 {
		t.Errorf("the answer shows %q (context %q, %d appends, streaming %v)", m.Shown(), m.Context(), m.Appends, m.Streaming)
	}
	sent := fake.Sent()
	if stop := sent[len(sent)-1]; strings.Contains(stop, "markdown_text") {
		t.Errorf("the stop carried text: %s", stop)
	}
}

// The last message of an answer a kill cut ends, as any final answer,
// with its feedback buttons for the stored turn: on the stopped stream,
// on the edited message, or on the note posted below when the record is
// behind — once in the thread.
func TestEndCutAnswerCarriesFeedback(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		stream, ended bool
		stored        string
		onNote        bool // the buttons go under the note posted below
	}{
		{name: "live stream", stream: true, stored: "Check"},
		{name: "ended stream, record behind", stream: true, ended: true, stored: "Checking", onNote: true},
		{name: "edited message, record whole", stored: "Checking the disks"},
		{name: "edited message, record behind", stored: "Checking the", onNote: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake, c, ref := cutAnswer(t, tc.stream, tc.ended)
			if err := c.EndCutAnswer(t.Context(), ref, tc.stored, cutNote, nil, "57"); err != nil {
				t.Fatalf("EndCutAnswer: %v", err)
			}
			var on []string
			for _, m := range fake.Thread("C0OPS", ref.Thread) {
				if v := feedbackOf(m); len(v) > 0 {
					if got := strings.Join(v, " "); got != "good:57 bad:57" {
						t.Errorf("message %s has feedback %q; want good:57 bad:57", m.TS, got)
					}
					on = append(on, m.TS)
				}
			}
			thread := fake.Thread("C0OPS", ref.Thread)
			want := ref.ID
			if tc.onNote {
				want = thread[len(thread)-1].TS
			}
			if len(on) != 1 || on[0] != want || (tc.onNote && want == ref.ID) {
				t.Errorf("feedback buttons on %v; want them once, on %s:\n%s", on, want, fake.ThreadText("C0OPS", ref.Thread))
			}
			if n := fake.Refusals("invalid_blocks"); n > 0 {
				t.Errorf("%d calls refused as invalid_blocks", n)
			}
		})
	}
}

// feedbackOf are the values of a message's feedback buttons.
func feedbackOf(m slackfake.Message) []string {
	var out []string
	for _, b := range m.Blocks {
		for _, e := range b.Elements {
			for _, fb := range []*slackfake.FeedbackButton{e.Positive, e.Negative} {
				if b.Type == "context_actions" && fb != nil {
					out = append(out, fb.Value)
				}
			}
		}
	}
	return out
}
