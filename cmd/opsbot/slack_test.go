package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

// slackWait bounds every wait on the fake Slack: a guard against a hang,
// not a pace.
const slackWait = 60 * time.Second

// slackBot is opsbot running in-process against a fake Slack, with its
// database in dir (so that a restart finds it).
type slackBot struct {
	t    *testing.T
	fake *slackfake.Server
	dir  string
	yaml string
	logs *notifyBuffer
	stop func()
	// base is the web listener's URL.
	base string
}

// startSlackBot runs opsbot with the Slack connector on fake, config
// more appended, and waits for its Socket Mode connection.
func startSlackBot(t *testing.T, fake *slackfake.Server, more string) *slackBot {
	t.Helper()
	b := &slackBot{t: t, fake: fake, dir: t.TempDir(), logs: &notifyBuffer{}}
	b.yaml = fmt.Sprintf("web:\n  listen: 127.0.0.1:0\nstore:\n  path: %q\nbot:\n  data_dir: %q\n"+
		"slack:\n  bot_token: %s\n  app_token: %s\n  api_url: %s\n",
		filepath.Join(b.dir, "opsbot.db"), filepath.Join(b.dir, "data"), slackfake.BotToken, slackfake.AppToken, fake.URL) + more
	b.start()
	t.Cleanup(func() {
		b.stop()
		if t.Failed() {
			t.Logf("opsbot's log:\n%s", b.logs)
		}
	})
	return b
}

// start runs the bot and waits until it is connected to the fake.
func (b *slackBot) start() {
	t := b.t
	t.Helper()
	cfg, err := parseConfig(filepath.Join(b.dir, "opsbot.yaml"), []byte(b.yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(b.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan string, 1), make(chan error, 1)
	go func() { done <- serveBot(ctx, cfg, log, runHooks{ready: ready}) }()
	stopped := false
	b.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("the bot after cancel: %v", err)
			}
		case <-time.After(slackWait):
			t.Errorf("the bot did not return after its context ended")
		}
	}
	select {
	case addr := <-ready:
		b.base = "http://" + addr
	case err := <-done:
		t.Fatalf("the bot: %v\n%s", err, b.logs)
	case <-time.After(slackWait):
		t.Fatalf("the bot did not start\n%s", b.logs)
	}
	select {
	case <-b.fake.Connected():
	case <-time.After(slackWait):
		t.Fatalf("the bot never connected to Socket Mode\n%s", b.logs)
	}
}

// notifyBuffer is a log that wakes whoever waits for a line.
type notifyBuffer struct {
	mu      sync.Mutex
	buf     strings.Builder
	changed chan struct{}
}

func (b *notifyBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.changed != nil {
		close(b.changed)
		b.changed = nil
	}
	return b.buf.Write(p)
}

func (b *notifyBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor waits until the log holds want; false after timeout.
func (b *notifyBuffer) waitFor(timeout time.Duration, want string) bool {
	deadline := time.After(timeout)
	for {
		b.mu.Lock()
		found := strings.Contains(b.buf.String(), want)
		if b.changed == nil {
			b.changed = make(chan struct{})
		}
		changed := b.changed
		b.mu.Unlock()
		if found {
			return true
		}
		select {
		case <-changed:
		case <-deadline:
			return false
		}
	}
}

// restart stops the bot and starts it again on the same database.
func (b *slackBot) restart() {
	b.stop()
	b.start()
}

// threadShows waits until the thread's text holds want; it returns the
// thread's text.
func (b *slackBot) threadShows(channel, thread, want string) string {
	b.t.Helper()
	ok := b.fake.WaitFor(slackWait, func(s *slackfake.Server) bool {
		return strings.Contains(s.ThreadText(channel, thread), want)
	})
	text := b.fake.ThreadText(channel, thread)
	if !ok {
		b.t.Fatalf("the thread never showed %q; it shows:\n%s", want, text)
	}
	return text
}

// A mention runs `run local uptime`, and its output lands in the thread.
func TestSlackMentionRunsCommand(t *testing.T) {
	t.Parallel()
	fake := slackfake.New()
	t.Cleanup(fake.Close)
	b := startSlackBot(t, fake, "")
	m := fake.Mention("C0OPS", "U0ALICE", "", "run local uptime")
	text := b.threadShows("C0OPS", m.Thread, "load average")
	if strings.Count(text, "opsbot:") < 1 {
		t.Errorf("no answer from the bot in the thread:\n%s", text)
	}
	if strings.Contains(text, "\uE000") || strings.Contains(text, "\uE001") {
		t.Errorf("a mention placeholder shows in the thread:\n%s", text)
	}
}

// A risky command posts a card. The requester's click is refused, to
// them alone; an approver named by user id and another by user group
// approve (quorum 2); the command runs once.
func TestSlackApprovalByUserAndGroup(t *testing.T) {
	t.Parallel()
	fake := slackfake.New()
	t.Cleanup(fake.Close)
	fake.AddUser("U0ALICE", "alice")
	fake.AddUser("U0BOB", "bob")
	fake.AddUser("U0CAROL", "carol")
	fake.SetGroup("S0SRE", "U0CAROL", "U0DAVE")
	target := filepath.Join(t.TempDir(), "ran")
	b := startSlackBot(t, fake, "approvals:\n  quorum: 2\n  approvers:\n    - slack:\n        users: [U0BOB]\n        user_groups: [S0SRE]\n")
	m := fake.Mention("C0OPS", "U0ALICE", "", "run local echo ran >> "+target)
	b.threadShows("C0OPS", m.Thread, "approve")
	card := findButton(t, fake, "C0OPS", m.Thread, "approve")

	click := func(user string) {
		t.Helper()
		n := len(fake.Ephemerals())
		if fake.Click("C0OPS", card, user, "approve") == "" {
			t.Fatalf("the card has no approve button")
		}
		if !fake.WaitFor(slackWait, func(s *slackfake.Server) bool { return len(s.Ephemerals()) > n }) {
			t.Fatalf("%s's click got no reply of their own", user)
		}
	}
	click("U0ALICE")
	if e := fake.Ephemerals(); e[len(e)-1].User != "U0ALICE" || !strings.Contains(e[len(e)-1].Text, "you asked for this") {
		t.Errorf("the requester's click was answered %+v; want a refusal to alice alone saying she asked for it", e[len(e)-1])
	}
	click("U0BOB")
	if _, err := os.Stat(target); err == nil {
		t.Fatalf("the command ran after one approval of the two needed")
	}
	click("U0CAROL")
	text := b.threadShows("C0OPS", m.Thread, "exit 0")
	got, err := os.ReadFile(target)
	if err != nil || string(got) != "ran\n" {
		t.Errorf("the file holds %q (%v); want the command to have run exactly once\n%s", got, err, text)
	}
}

// findButton is the ts of the thread's message with a button actionID.
func findButton(t *testing.T, fake *slackfake.Server, channel, thread, actionID string) string {
	t.Helper()
	for _, m := range fake.Thread(channel, thread) {
		for _, b := range m.Buttons() {
			if b == actionID {
				return m.TS
			}
		}
	}
	t.Fatalf("no message with a %s button in the thread:\n%s", actionID, fake.ThreadText(channel, thread))
	return ""
}

// The same event delivered 4 times — Slack's retries, and once more after
// a restart — runs once. A later message in the same thread is answered
// after any duplicate would have been (a thread's work runs in order), so
// its answer says the duplicates are done with.
func TestSlackDuplicateDeliveryRunsOnce(t *testing.T) {
	t.Parallel()
	fake := slackfake.New()
	t.Cleanup(fake.Close)
	b := startSlackBot(t, fake, "")
	m := fake.Mention("C0OPS", "U0ALICE", "", "run local echo marker-once")
	b.threadShows("C0OPS", m.Thread, "exit 0")
	for attempt := 1; attempt <= 2; attempt++ {
		fake.Resend("events_api", m.Payloads[0], attempt)
	}
	b.restart()
	id := fake.Resend("events_api", m.Payloads[0], 3)
	select {
	case <-fake.Acked(id):
	case <-time.After(slackWait):
		t.Fatal("the redelivery after the restart was never acknowledged")
	}
	fake.Mention("C0OPS", "U0ALICE", m.Thread, "run local echo sentinel-after")
	text := b.threadShows("C0OPS", m.Thread, "`echo sentinel-after` on local: exit")
	answers := 0
	for _, msg := range fake.Thread("C0OPS", m.Thread) {
		if msg.Bot && strings.Contains(msg.Shown(), "marker-once\n") {
			answers++
		}
	}
	if answers != 1 {
		t.Errorf("the command's answer shows %d times; want once:\n%s", answers, text)
	}
}

// Every envelope is acknowledged within Slack's 3 s even while the model
// stalls on every answer: the acknowledgement comes once the event is on
// record, before any work.
func TestSlackAckWhileModelStalls(t *testing.T) {
	t.Parallel()
	llm := &fakeLLM{t: t, say: []string{"never"}, next: make(chan struct{})}
	fake := slackfake.New()
	t.Cleanup(fake.Close)
	startSlackBot(t, fake, fmt.Sprintf("agent:\n  provider: openai\n  base_url: %q\n  api_key: test-key\n  model: fake-model\n", llm.serve(t)))
	t.Cleanup(func() { close(llm.next) })
	var ids []string
	for i := range 40 {
		m := fake.Mention("C0OPS", "U0ALICE", "", fmt.Sprintf("why is web-%d slow?", i))
		ids = append(ids, m.Envelopes...)
	}
	for _, id := range ids {
		select {
		case <-fake.Acked(id):
		case <-time.After(slackWait):
			t.Fatalf("envelope %s was never acknowledged", id)
		}
	}
	lat := fake.AckLatencies()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	p99 := lat[len(lat)*99/100]
	t.Logf("ack latency of %d envelopes: p50 %s, p99 %s, max %s", len(lat), lat[len(lat)/2], p99, lat[len(lat)-1])
	// The ack waits for the inbox record (connectors.Handler), so it
	// costs a write; the bound is Slack's own: past 3 s it delivers the
	// envelope again.
	if p99 >= 3*time.Second {
		t.Errorf("ack p99 is %s while the model stalls; Slack wants every envelope acked within 3 s", p99)
	}
}

// The Slack tokens and signing secret are secrets of the config: the one
// redactor knows them, so no log line, message or audit row shows them.
func TestSlackSecretsAreRedacted(t *testing.T) {
	t.Parallel()
	const secret = "8f742231b10e8888abcd99yyyzzz85a5"
	yaml := "slack:\n  mode: http\n  bot_token: ${SLACK_BOT_TOKEN}\n  app_token: " + slackfake.AppToken + "\n  signing_secret: ${SLACK_SIGNING_SECRET}\n"
	cfg, err := parseConfig("c.yaml", []byte(yaml), env(map[string]string{"SLACK_BOT_TOKEN": slackfake.BotToken, "SLACK_SIGNING_SECRET": secret}))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{slackfake.BotToken, slackfake.AppToken, secret} {
		if out := cfg.redactor().String("token " + s); strings.Contains(out, s) {
			t.Errorf("the redactor lets a Slack secret through: %q", out)
		}
	}
}

// config check names the token the chosen mode is missing.
func TestSlackConfigNamesMissingToken(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ yaml, want string }{
		{"slack:\n  bot_token: " + slackfake.BotToken + "\n", "slack.app_token: is missing: socket mode needs the app-level token"},
		{"slack:\n  mode: http\n  bot_token: " + slackfake.BotToken + "\n", "slack.signing_secret: is missing: http mode needs"},
		{"slack:\n  app_token: " + slackfake.AppToken + "\n", "slack.bot_token: is missing"},
		{"slack:\n  mode: websocket\n  bot_token: " + slackfake.BotToken + "\n", `slack.mode: "websocket" is not a mode`},
	} {
		_, err := parseConfig("c.yaml", []byte(tc.yaml), env(nil))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("config %q: %v; want %q", tc.yaml, err, tc.want)
		}
		if err != nil && (strings.Contains(err.Error(), slackfake.BotToken) || strings.Contains(err.Error(), slackfake.AppToken)) {
			t.Errorf("config check shows a token: %v", err)
		}
	}
}

// agentYAML turns the agent on over llm.
func agentYAML(t *testing.T, llm *fakeLLM) string {
	return fmt.Sprintf("agent:\n  provider: openai\n  base_url: %q\n  api_key: test-key\n  model: fake-model\n", llm.serve(t))
}

// streamingShows waits until the thread has a bot message that is being
// streamed and shows want.
func (b *slackBot) streamingShows(channel, thread, want string) {
	b.t.Helper()
	ok := b.fake.WaitFor(slackWait, func(s *slackfake.Server) bool {
		for _, m := range s.Thread(channel, thread) {
			if m.Bot && m.Streaming && strings.Contains(m.Shown(), want) {
				return true
			}
		}
		return false
	})
	if !ok {
		b.t.Fatalf("no streaming message shows %q; the thread:\n%s", want, b.fake.ThreadText(channel, thread))
	}
}

// finalAnswer waits until the thread's bot messages, none streaming any
// more, show want in all.
func (b *slackBot) finalAnswer(channel, thread, want string) {
	b.t.Helper()
	answer := func(s *slackfake.Server) (string, bool) {
		var text strings.Builder
		for _, m := range s.Thread(channel, thread) {
			if m.Bot {
				if m.Streaming {
					return "", false
				}
				text.WriteString(m.Shown())
			}
		}
		return text.String(), true
	}
	if !b.fake.WaitFor(slackWait, func(s *slackfake.Server) bool { got, done := answer(s); return done && got == want }) {
		got, _ := answer(b.fake)
		b.t.Fatalf("the answer shows %q; want %q", got, want)
	}
}

// An agent answer streams in through Slack's native streaming, as the
// model writes it, and ends showing exactly what the model said.
func TestSlackAgentAnswerStreams(t *testing.T) {
	t.Parallel()
	llm := &fakeLLM{t: t, say: []string{"Disk ", "usage ", "is ", "fine."}, next: make(chan struct{})}
	fake := slackfake.New()
	t.Cleanup(fake.Close)
	b := startSlackBot(t, fake, agentYAML(t, llm))
	m := fake.Mention("C0OPS", "U0ALICE", "", "how is the disk?")
	// While the model thinks, before its first word, the thread says so.
	if !fake.WaitFor(slackWait, func(s *slackfake.Server) bool { return len(s.Statuses()) > 0 }) {
		t.Fatal("no thinking status while the model had not said a word")
	}
	if st := fake.Statuses()[0]; st.Thread != m.Thread || st.Status != "is thinking…" || len(fake.Thread("C0OPS", m.Thread)) != 1 {
		t.Errorf("thinking status %+v, thread %s; want \"is thinking…\" in the thread before any answer", st, fake.ThreadText("C0OPS", m.Thread))
	}
	llm.next <- struct{}{}
	b.streamingShows("C0OPS", m.Thread, "Disk")
	llm.next <- struct{}{}
	b.streamingShows("C0OPS", m.Thread, "Disk usage")
	llm.next <- struct{}{}
	llm.next <- struct{}{}
	b.finalAnswer("C0OPS", m.Thread, "Disk usage is fine.")
	if fake.Calls("chat.startStream") == 0 || fake.Calls("chat.appendStream") == 0 || fake.Calls("chat.stopStream") == 0 {
		t.Errorf("startStream %d, appendStream %d, stopStream %d: the answer did not stream natively",
			fake.Calls("chat.startStream"), fake.Calls("chat.appendStream"), fake.Calls("chat.stopStream"))
	}
}

// Slack asks the connection to go (disconnect) while an answer streams:
// the connector connects anew, the answer completes, and the next
// mention is answered too.
func TestSlackDisconnectMidAnswer(t *testing.T) {
	t.Parallel()
	llm := &fakeLLM{t: t, say: []string{"Checking ", "web-1: ", "all good."}, next: make(chan struct{})}
	fake := slackfake.New()
	t.Cleanup(fake.Close)
	b := startSlackBot(t, fake, agentYAML(t, llm))
	m := fake.Mention("C0OPS", "U0ALICE", "", "is web-1 ok?")
	llm.next <- struct{}{}
	b.streamingShows("C0OPS", m.Thread, "Checking")
	fake.Disconnect("refresh_requested")
	select {
	case <-fake.Connected():
	case <-time.After(slackWait):
		t.Fatal("the connector did not connect again after Slack's disconnect")
	}
	llm.next <- struct{}{}
	llm.next <- struct{}{}
	b.finalAnswer("C0OPS", m.Thread, "Checking web-1: all good.")
	fake.DropSockets() // and a connection lost without a word
	select {
	case <-fake.Connected():
	case <-time.After(slackWait):
		t.Fatal("the connector did not connect again after the socket was lost")
	}
	m2 := fake.Mention("C0OPS", "U0ALICE", "", "run local echo after-reconnect")
	b.threadShows("C0OPS", m2.Thread, "`echo after-reconnect` on local: exit 0")
}

// Slack unlinks the app while the bot runs (link_disabled on the next
// connection): the Slack connector stops with one clear log line,
// /readyz names it, and the web chat goes on.
func TestSlackRefusedTokenStopsOnlySlack(t *testing.T) {
	t.Parallel()
	fake := slackfake.New()
	t.Cleanup(fake.Close)
	b := startSlackBot(t, fake, "")
	fake.Refuse("link_disabled")
	fake.Disconnect("refresh_requested")
	var rep readyReport
	if !b.logs.waitFor(slackWait, "a connector stopped") {
		t.Fatalf("the connector did not stop on link_disabled:\n%s", b.logs)
	}
	resp, err := http.Get(b.base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&rep)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !slices.Equal(rep.Down, []string{"connector slack"}) ||
		!strings.Contains(rep.Checks["connector slack"], "link_disabled") || rep.Checks["connector web"] != "ok" {
		t.Errorf("/readyz = %d %+v; want slack down, naming link_disabled, and the web chat ok", resp.StatusCode, rep)
	}
	if n := strings.Count(b.logs.String(), "level=ERROR"); n != 1 {
		t.Errorf("%d error lines in the log; want one clear line:\n%s", n, b.logs)
	}
	for _, s := range []string{slackfake.BotToken, slackfake.AppToken} {
		if strings.Contains(b.logs.String(), s) {
			t.Errorf("the log shows a token")
		}
	}
	web := postMessage(t, b.base, "run local echo web-still-works")
	if web == "" {
		t.Errorf("the web chat did not take a message after Slack stopped")
	}
}
