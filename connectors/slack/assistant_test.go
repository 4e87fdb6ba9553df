package slack_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/approvals/redact"
	"github.com/opsbot/opsbot/approvals/redact/redacttest"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/slack"
	"github.com/opsbot/opsbot/connectors/slack/slackfake"
	"github.com/opsbot/opsbot/store"
)

// An assistant thread, end to end over Socket Mode against the fake: its
// start is answered with the suggested prompts, its first question
// reaches the Handler and titles the thread, a turn's status shows under
// it, and a later question leaves the title alone.
func TestAssistantThreadPromptsTitleAndStatus(t *testing.T) {
	t.Parallel()
	r := startRig(t, slack.Config{}, slack.Options{})
	th := r.fake.StartAssistantThread("D0ALICE", "U04ALICE")
	thread := func(s *slackfake.Server) slackfake.AssistantThread { return s.AssistantThreads()[0] }
	if !r.fake.WaitFor(30*time.Second, func(s *slackfake.Server) bool { return len(thread(s).Prompts) > 0 }) {
		t.Fatalf("the assistant thread got no suggested prompts")
	}
	var titles []string
	for _, p := range thread(r.fake).Prompts {
		titles = append(titles, p.Title)
	}
	if want := []string{"What's failing on web?", "Show running jobs", "Summarize this thread"}; !slices.Equal(titles, want) {
		t.Errorf("suggested prompts %q; want %q", titles, want)
	}

	r.fake.Reply("D0ALICE", "U04ALICE", th.Thread, "What's failing on web?")
	ev := r.next(t)
	if ev.Kind != connectors.EventMessage || !ev.Mention || ev.Thread != th.Thread || ev.Text != "What's failing on web?" {
		t.Errorf("the first question came to the Handler as %+v", ev)
	}
	if !r.fake.WaitFor(30*time.Second, func(s *slackfake.Server) bool { return thread(s).Title != "" }) {
		t.Fatalf("the assistant thread got no title")
	}
	if got := thread(r.fake).Title; got != "What's failing on web?" {
		t.Errorf("thread title %q; want the first question", got)
	}
	d := connectors.Dest{Platform: slack.Platform, Channel: "D0ALICE", Thread: th.Thread}
	if err := r.conn.Thinking(t.Context(), d, "is thinking…"); err != nil {
		t.Fatalf("thinking: %v", err)
	}
	if st := r.fake.Statuses(); len(st) != 1 || st[0].Thread != th.Thread || st[0].Status != "is thinking…" {
		t.Errorf("statuses %+v; want is thinking… in the assistant thread", st)
	}

	r.fake.Reply("D0ALICE", "U04ALICE", th.Thread, "and on db?")
	r.next(t)
	if n := r.fake.Calls("assistant.threads.setTitle"); n != 1 {
		t.Errorf("setTitle called %d times; want once, for the first question", n)
	}
}

// assistant:write is optional: in a workspace whose app lacks it, Slack
// refuses the assistant calls, and the questions of a thread still reach
// the Handler, one after the other.
func TestAssistantThreadWithoutTheScope(t *testing.T) {
	t.Parallel()
	r := startRig(t, slack.Config{}, slack.Options{})
	r.fake.NoAssistant()
	th := r.fake.StartAssistantThread("D0ALICE", "U04ALICE")
	for _, q := range []string{"What's failing on web?", "Show running jobs"} {
		r.fake.Reply("D0ALICE", "U04ALICE", th.Thread, q)
		if ev := r.next(t); ev.Text != q || ev.Thread != th.Thread {
			t.Errorf("question %q reached the Handler as %+v", q, ev)
		}
	}
	if !r.fake.WaitFor(30*time.Second, func(s *slackfake.Server) bool {
		return s.Refusals("missing_scope") >= 2
	}) {
		t.Errorf("the prompts and title calls were not both made and refused: %d refusals", r.fake.Refusals("missing_scope"))
	}
	if th := r.fake.AssistantThreads()[0]; len(th.Prompts) != 0 || th.Title != "" {
		t.Errorf("a workspace without assistant:write shows prompts %v, title %q", th.Prompts, th.Title)
	}
}

// A restart between a thread's start and its first question (a new
// process, the same SQLite file) still titles the thread from that
// question, once.
func TestAssistantThreadTitledAfterRestart(t *testing.T) {
	t.Parallel()
	fake := slackfake.New()
	t.Cleanup(fake.Close)
	path := filepath.Join(t.TempDir(), "opsbot.db")
	open := func() *store.Store {
		s, err := store.Open(t.Context(), store.Config{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	before := open()
	r := startOn(t, fake, slack.Config{}, slack.Options{Threads: before.AssistantThreads(slack.Platform)}, true)
	th := fake.StartAssistantThread("D0ALICE", "U04ALICE")
	if !fake.WaitFor(wait, func(s *slackfake.Server) bool { return s.Calls("assistant.threads.setSuggestedPrompts") > 0 }) {
		t.Fatalf("the assistant thread's start was not answered")
	}
	r.stop()
	before.Close()

	r = startOn(t, fake, slack.Config{}, slack.Options{Threads: open().AssistantThreads(slack.Platform)}, true)
	for _, q := range []string{"What's failing on web?", "and on db?"} {
		fake.Reply("D0ALICE", "U04ALICE", th.Thread, q)
		r.next(t)
	}
	if !fake.WaitFor(wait, func(s *slackfake.Server) bool { return s.AssistantThreads()[0].Title != "" }) {
		t.Fatalf("the assistant thread got no title after the restart")
	}
	if got := fake.AssistantThreads()[0].Title; got != "What's failing on web?" {
		t.Errorf("thread title %q; want the first question", got)
	}
	if n := fake.Calls("assistant.threads.setTitle"); n != 1 {
		t.Errorf("setTitle called %d times; want once", n)
	}
}

// The title is the one text the connector posts of its own accord, from
// the question as the person typed it: a secret in the first question is
// masked in the title Slack holds, by the default rules and by the
// redactor the composition root hands in (which knows opsbot's own keys).
func TestAssistantThreadTitleMasksSecrets(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, question string
		opt            slack.Options
		secrets        []string
		cut            bool // the label falls past the cut
	}{
		{name: "aws key", question: "why does " + redacttest.AWSAccessKey + " fail on web?", secrets: []string{redacttest.AWSAccessKey}},
		{name: "password", question: "db says password=" + redacttest.DBPassword + " is wrong", secrets: []string{redacttest.DBPassword}},
		{name: "own key", question: "is " + redacttest.WebAPIKey + " still valid?",
			opt: slack.Options{Redact: redact.New(redacttest.OwnSecrets...).String}, secrets: []string{redacttest.WebAPIKey}},
		// The cut at 80 characters falls inside the key: masked whole first.
		{name: "key at the cut", question: "key=" + strings.Repeat("x", 66) + "/" + redacttest.AWSAccessKey, secrets: []string{redacttest.AWSAccessKey, redacttest.AWSAccessKey[:8]}, cut: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := startRig(t, slack.Config{}, tc.opt)
			th := r.fake.StartAssistantThread("D0ALICE", "U04ALICE")
			r.fake.Reply("D0ALICE", "U04ALICE", th.Thread, tc.question)
			r.next(t)
			if !r.fake.WaitFor(30*time.Second, func(s *slackfake.Server) bool { return s.AssistantThreads()[0].Title != "" }) {
				t.Fatalf("the assistant thread got no title")
			}
			title := r.fake.AssistantThreads()[0].Title
			redacttest.AssertNoSecret(t, tc.secrets, title)
			if !tc.cut && !strings.Contains(title, "[redacted") {
				t.Errorf("title %q; want the secret shown as redacted", title)
			}
		})
	}
}
