package bot

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals/redact/redacttest"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/slack"
	"github.com/opsbot/opsbot/connectors/slack/slackfake"
	"github.com/opsbot/opsbot/store"
)

// severable is the Web API's transport of a process the test kills:
// once cut, none of its requests reach Slack, as none of a dead
// process's would.
type severable struct {
	next http.RoundTripper
	cut  atomic.Bool
}

// severableSlackBot starts a bot on model m behind the Slack fake, its
// Web API calls through a severable transport (a crash cuts them), its
// Socket Mode connected: the start the recovery tests share.
func severableSlackBot(t *testing.T, m agent.Provider) (*slackfake.Server, string, *severable, *Bot) {
	t.Helper()
	fake := slackfake.New()
	t.Cleanup(fake.Close)
	dir := t.TempDir()
	dead := &severable{next: fake.Transport()}
	conn, err := slack.New(slack.Config{BotToken: slackfake.BotToken, AppToken: slackfake.AppToken, APIURL: fake.URL},
		slack.Options{HTTPClient: &http.Client{Transport: dead}})
	if err != nil {
		t.Fatal(err)
	}
	b, stop := startBot(t, dir, conn, botOptions{model: m})
	t.Cleanup(stop)
	connectSlack(t, fake, conn, b)
	return fake, dir, dead, b
}

func (s *severable) RoundTrip(r *http.Request) (*http.Response, error) {
	if s.cut.Load() {
		return nil, errors.New("the process is dead")
	}
	return s.next.RoundTrip(r)
}

// A process killed (kill -9) while a command of its answer runs on
// Slack: its stream shows the command's card in progress, and only that
// process knew it. The next start's recovery stops the cut stream with
// the note and, in the same stop, closes the card as an error saying
// opsbot restarted and its end is not known; the card of the command that
// had ended keeps its status. No card is left spinning, and none on
// record holds a secret its title had.
func TestRestartClosesTheCardsACrashLeftOpen(t *testing.T) {
	t.Parallel()
	wait, release := held(t)
	wait += " # " + redacttest.GitHubToken
	m := &model{steps: []func(context.Context, agent.Request, func(agent.StreamEvent) bool){
		callTool("call-ok", "run_command", `{"target":"local","command":"echo up"}`),
		callTool("call-wait", "run_command", `{"target":"local","command":"`+wait+`"}`),
		text("Both ran."),
	}}
	fake, dir, dead, b := severableSlackBot(t, m)

	root := fake.Mention("C0OPS", "U0ALICE", "", "check web")
	running := fake.WaitFor(slackWait, func(s *slackfake.Server) bool {
		cards, _ := cardsOf(s, "C0OPS", root.Thread)
		_, stop := stopShown(s, "C0OPS", root.Thread)
		return cards["call-ok"].Status == "complete" && cards["call-wait"].Status == "in_progress" && stop
	})
	if !running {
		release()
		t.Fatalf("no card in progress, and Stop, while the command runs:\n%s", fake.ThreadText("C0OPS", root.Thread))
	}
	// kill -9: nothing more of this process reaches Slack, nothing of it
	// is cleaned up; its command is still running.
	dead.cut.Store(true)
	defer release()

	record := postedValues(t, filepath.Join(dir, "bot.db"))
	if !slices.ContainsFunc(record, func(v string) bool { return strings.Contains(v, "call-wait") }) {
		t.Errorf("the running command's card is not on record with its stream: %q", record)
	}
	redacttest.AssertNoSecret(t, redacttest.Secrets(), record...)

	fresh, err := slack.New(slack.Config{BotToken: slackfake.BotToken, AppToken: slackfake.AppToken, APIURL: fake.URL},
		slack.Options{HTTPClient: &http.Client{Transport: fake.Transport()}})
	if err != nil {
		t.Fatal(err)
	}
	_, stopFresh := startBot(t, dir, fresh, botOptions{held: true})
	t.Cleanup(stopFresh)

	stream, ok := answerStream(fake, "C0OPS", root.Thread)
	if !ok {
		t.Fatalf("no answer stream in the thread:\n%s", fake.ThreadText("C0OPS", root.Thread))
	}
	if stream.Streaming || !strings.Contains(stream.Shown(), "opsbot restarted before this answer finished") {
		t.Errorf("the cut stream (streaming %v) shows %q; want it stopped with the note", stream.Streaming, stream.Shown())
	}
	for _, tk := range stream.Tasks {
		switch {
		case tk.Status == "pending" || tk.Status == "in_progress":
			t.Errorf("card %s still %s after the restart: it spins for good", tk.ID, tk.Status)
		case tk.ID == "call-ok" && tk.Status != "complete":
			t.Errorf("the ended command's card became %q (%s)", tk.Status, tk.Output)
		case tk.ID == "call-wait" && (tk.Status != "error" || !strings.Contains(tk.Output, "opsbot restarted while this ran")):
			t.Errorf("the running command's card ends %q with %q; want an error saying opsbot restarted while it ran", tk.Status, tk.Output)
		}
		redacttest.AssertNoSecret(t, redacttest.Secrets(), tk.Title, tk.Output)
	}
	for _, msg := range fake.StoppedOpen() {
		t.Errorf("message %s stopped with cards still open: %+v", msg.TS, msg.OpenTasks())
	}
	if left, _ := storeOf(b).Sessions().StreamingMessages(context.Background()); len(left) != 0 {
		t.Errorf("%d messages still on record as being written after the recovery: %+v", len(left), left)
	}
}

// postedValues is every value of the records of messages being written, in
// the database file at path, as text.
func postedValues(t *testing.T, path string) []string {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT * FROM posted_messages")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for _, v := range vals {
			out = append(out, fmt.Sprintf("%s", v))
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// A connector without task cards (Discord's) ends a cut answer whose
// record holds open cards as it ends any: the text on record and the
// note, nothing of the cards.
func TestCardsOnRecordChangeNothingWithoutCards(t *testing.T) {
	t.Parallel()
	conn := newFakeConn(connectors.Limits{MaxText: 2000})
	ref, _ := conn.Post(t.Context(), connectors.Dest{Platform: "fake", Channel: "C1", Thread: "T1"}, connectors.Message{Text: "Checking"})
	st := &fakeRecoveryStore{streaming: []store.PostedMessage{{ID: 1, Platform: "fake", Channel: "C1", Thread: "T1", MessageID: ref.ID,
		Text: "Checking", Cards: []store.OpenCard{{ID: "call-1", Title: "`uptime` on web-1"}}}}}
	(&recovery{store: st, out: onePlatform{conn}, log: slog.New(slog.DiscardHandler)}).run(t.Context())
	if m := conn.thread("T1"); len(m) != 1 || m[0].msg.Text != "Checking"+interruptedNote {
		t.Errorf("the cut answer shows %+v; want its text and the note", m)
	}
	if !slices.Equal(st.finished, []int64{1}) {
		t.Errorf("records finished: %v; want the answer's", st.finished)
	}
}
