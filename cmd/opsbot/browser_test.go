package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/opsbot/opsbot/connectors/web/testutil"
)

// The whole embedded default — store file, fleet with host local, policy,
// approvals gate, bot and web chat — driven through a real headless
// Chromium, as people use it: commands run for real on this machine.

// startBrowserBot runs opsbot in-process on a free loopback port with its
// database and session directories in a temporary directory and llm as
// its model, and returns the chat's base URL. The bot stops when the test
// ends; its log is shown if the test failed.
func startBrowserBot(t *testing.T, llm *fakeLLM) string {
	t.Helper()
	url, _ := startBrowserBotWith(t, llm, "approvals:\n  approvers:\n    - web:\n        users: [alice, bob]\n")
	return url
}

// startBrowserBotWith is startBrowserBot with more config (YAML appended
// to the file), and the bot's log.
func startBrowserBotWith(t *testing.T, llm *fakeLLM, more string) (string, *lockedBuffer) {
	t.Helper()
	return startBrowserBotIn(t, t.TempDir(), llm, more)
}

// startBrowserBotIn is startBrowserBotWith with the database
// (dir/opsbot.db) and data directory in dir.
func startBrowserBotIn(t *testing.T, dir string, llm *fakeLLM, more string) (string, *lockedBuffer) {
	t.Helper()
	yaml := fmt.Sprintf("web:\n  listen: 127.0.0.1:0\nstore:\n  path: %q\nbot:\n  data_dir: %q\n"+
		"agent:\n  provider: openai\n  base_url: %q\n  api_key: test-key\n  model: fake-model\n",
		filepath.Join(dir, "opsbot.db"), filepath.Join(dir, "data"), llm.serve(t)) + more
	return startBotYAML(t, dir, yaml)
}

// startBotYAML runs the bot in-process on the config yaml (kept as
// dir/opsbot.yaml would be) until the test ends, and returns the web
// chat's address and the bot's log.
func startBotYAML(t *testing.T, dir, yaml string) (string, *lockedBuffer) {
	t.Helper()
	noEnv := func(string) (string, bool) { return "", false }
	cfg, err := parseConfig(filepath.Join(dir, "opsbot.yaml"), []byte(yaml), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan string, 1), make(chan error, 1)
	go func() { done <- runBot(ctx, cfg, log, ready) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("runBot after cancel: %v", err)
			}
		case <-time.After(testutil.DefaultWait): // a hang, not a speed bound
			t.Errorf("runBot did not return after its context ended")
		}
		if t.Failed() {
			t.Logf("opsbot's log:\n%s", logs)
		}
	})
	select {
	case addr := <-ready:
		return "http://" + addr, logs
	case err := <-done:
		t.Fatalf("runBot: %v\n%s", err, logs)
	case <-time.After(testutil.DefaultWait):
		t.Fatalf("runBot did not start listening\n%s", logs)
	}
	return "", nil
}

// lockedBuffer is a log destination safe for the bot's goroutines and
// the test reading it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// findMessage returns the first message ok accepts.
func findMessage(ms []testutil.Message, ok func(testutil.Message) bool) (testutil.Message, bool) {
	i := slices.IndexFunc(ms, ok)
	if i < 0 {
		return testutil.Message{}, false
	}
	return ms[i], true
}

// hasMessage adapts ok to testutil.Chat.WaitFor.
func hasMessage(ok func(testutil.Message) bool) func([]testutil.Message) bool {
	return func(ms []testutil.Message) bool {
		_, found := findMessage(ms, ok)
		return found
	}
}

// finishedRun accepts the bot's finished output of `run` for command:
// its context line then names the exit code. The page renders the
// context's markdown, so the command's backticks are gone.
func finishedRun(command string) func(testutil.Message) bool {
	return func(m testutil.Message) bool {
		return m.Bot && m.Finished && strings.Contains(m.Context, command+" on local: exit")
	}
}

// openChannel is the channel the tab shows (the address is #/channel/thread).
func openChannel(t *testing.T, c *testutil.Chat) string {
	t.Helper()
	return strings.Trim(c.Eval(`location.hash.split('/')[1] || ''`), `"`)
}

// Alice mentions the bot with `run local uptime`; the real uptime's
// output appears in her thread as a code block with a ✓ exit-0 line.
func TestBrowserRunUptimeShowsItsOutput(t *testing.T) {
	t.Parallel()
	url := startBrowserBot(t, &fakeLLM{t: t})
	alice := testutil.Open(t, testutil.Browser(t), url, "alice")
	alice.StartThread("@opsbot run local uptime")

	ms := alice.WaitFor("uptime's output", hasMessage(finishedRun("uptime")))
	out, _ := findMessage(ms, finishedRun("uptime"))
	if !strings.Contains(out.Text, "load average") || out.Elements["PRE"] != 1 {
		t.Errorf("the output message shows %q with elements %v; want uptime's load average in one code block", out.Text, out.Elements)
	}
	if !strings.HasPrefix(out.Context, "✓ uptime on local: exit 0 in ") {
		t.Errorf("the output's context line is %q; want ✓ … exit 0 in …", out.Context)
	}
	if len(out.Buttons) != 0 {
		t.Errorf("the finished output still shows buttons %q", out.Buttons)
	}
	if ms[0].Bot || ms[0].User != "alice" || ms[0].Text != "@opsbot run local uptime" {
		t.Errorf("the thread starts with %+v; want alice's mention", ms[0])
	}
}

// A risky command waits for a second person: alice may not approve her
// own request, bob in his own browser may, and then the command runs.
func TestBrowserRiskyCommandRunsWhenSomeoneElseApproves(t *testing.T) {
	t.Parallel()
	url := startBrowserBot(t, &fakeLLM{t: t})
	browser := testutil.Browser(t)
	alice := testutil.Open(t, browser, url, "alice")
	target := filepath.Join(t.TempDir(), "approved")
	command := "touch " + target
	thread := alice.StartThread("@opsbot run local " + command)
	channel := openChannel(t, alice)

	isCard := func(m testutil.Message) bool { return m.Bot && strings.HasPrefix(m.Text, "Approval needed") }
	ms := alice.WaitFor("the approval card", hasMessage(func(m testutil.Message) bool {
		return isCard(m) && pendingCard(m.Buttons)
	}))
	card, _ := findMessage(ms, isCard)
	if !strings.Contains(card.Text, "requested by @alice") || !strings.Contains(card.Text, command) || !slices.Contains(card.Fields, "Host: local") {
		t.Errorf("the card shows %q with fields %q; want alice as requester, the command and the host", card.Text, card.Fields)
	}

	alice.Click(card.ID, "Approve")
	alice.WaitNotice("Your vote was not counted: you asked for this command; someone else has to approve it")
	if _, err := os.Stat(target); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("after alice approved her own request the file is there (stat: %v)", err)
	}
	now := alice.Messages()
	if c, _ := findMessage(now, isCard); !pendingCard(c.Buttons) {
		t.Fatalf("alice's refused vote decided the card: %+v", c)
	}
	if out, ran := findMessage(now, finishedRun(command)); ran {
		t.Fatalf("the command ran on alice's own approval: %+v", out)
	}

	bob := testutil.Open(t, testutil.NewUser(t, browser), url, "bob")
	bob.OpenThread(channel, thread)
	bob.Click(card.ID, "Approve")
	decided := func(m testutil.Message) bool {
		return m.ID == card.ID && strings.Contains(m.Context, "approved by @bob") && len(m.Buttons) == 0
	}
	bob.WaitFor("the card approved by bob", hasMessage(decided))
	ms = alice.WaitFor("the card approved by bob and the command's output",
		func(ms []testutil.Message) bool {
			return hasMessage(decided)(ms) && hasMessage(finishedRun(command))(ms)
		})
	out, _ := findMessage(ms, finishedRun(command))
	if !strings.HasPrefix(out.Context, "✓ "+command+" on local: exit 0 in ") {
		t.Errorf("alice sees the output's context line %q; want ✓ … exit 0", out.Context)
	}
	if _, err := os.Stat(target); err != nil {
		t.Errorf("the approved command did not run: %v", err)
	}
}

// storyPieces are what the fake model streams, one at a time; a piece
// starts with its space, so every intermediate text ends in a word and
// the page's layout keeps it whole.
var storyPieces = []string{"Once", " upon", " a", " time", " a", " bot", " watched", " the", " disks", " and", " all", " was well."}

// An answer from the model grows on the page as it streams and ends as
// exactly what the model said. The model sends each piece only once the
// page shows the text so far, so every step of the growth must show.
func TestBrowserStreamedAnswerVisiblyGrows(t *testing.T) {
	t.Parallel()
	next := make(chan struct{})
	url := startBrowserBot(t, &fakeLLM{t: t, say: storyPieces, next: next})
	alice := testutil.Open(t, testutil.Browser(t), url, "alice")
	alice.StartThread("@opsbot tell me a story")
	alice.Eval(answerRecorderJS)

	for i := range storyPieces {
		select {
		case next <- struct{}{}:
		case <-time.After(testutil.DefaultWait): // a hang guard, not a speed bound
			t.Fatalf("the model was not asked for piece %d", i+1)
		}
		want := strings.Join(storyPieces[:i+1], "")
		alice.Do(chromedp.Poll[chromedp.Void](fmt.Sprintf(`(() => {
  const m = document.querySelector('#messages .msg.bot');
  return !!m && m.querySelector('.msg-body').innerText === %q;
})()`, want), chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(0)))
	}
	states, stop, final := watchAnswer(t, alice)
	if !stop {
		t.Errorf("the answer never showed a Stop button while it streamed")
	}
	if want := len(storyPieces) - 1; len(states) < want {
		t.Errorf("saw %d distinct states of the answer before the final one, want %d: %q", len(states), want, states)
	}
	all := append(slices.Clone(states), final.Text)
	for i := 1; i < len(all); i++ {
		if !strings.HasPrefix(all[i], all[i-1]) {
			t.Errorf("state %d %q does not continue state %d %q", i, all[i], i-1, all[i-1])
		}
	}
	if want := strings.Join(storyPieces, ""); final.Text != want {
		t.Errorf("the finished answer is %q, want %q", final.Text, want)
	}
	if len(final.Buttons) != 0 {
		t.Errorf("the finished answer still shows buttons %q", final.Buttons)
	}
}

// watchAnswer waits (on the page's own mutations) until the bot's first
// message in the open thread is finished, and returns what the recorder
// (answerRecorderJS, installed before) saw: the distinct non-empty texts
// the message showed before, in order (the final text, when it showed
// before the message was marked finished, is not among them), whether it
// offered Stop meanwhile, and the finished message. A MutationObserver
// sees every change of the page, so no state is missed between two looks.
func watchAnswer(t *testing.T, c *testutil.Chat) (states []string, stop bool, final testutil.Message) {
	t.Helper()
	c.Do(chromedp.Poll[chromedp.Void](`(() => {
  const m = document.querySelector('#messages .msg.bot');
  return !!m && m.dataset.finished === 'true';
})()`, chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(0)))
	var rec struct {
		States []string `json:"states"`
		Stop   bool     `json:"stop"`
	}
	if err := json.Unmarshal([]byte(c.Eval(`window.__answer`)), &rec); err != nil {
		t.Fatalf("read the recorded states: %v", err)
	}
	m, ok := findMessage(c.Messages(), func(m testutil.Message) bool { return m.Bot })
	if !ok || !m.Finished {
		t.Fatalf("the page says the answer is finished, but the thread shows %+v", c.Messages())
	}
	states = rec.States
	if n := len(states); n > 0 && states[n-1] == m.Text {
		states = states[:n-1]
	}
	return states, rec.Stop, m
}

// answerRecorderJS records the bot's first message's texts while it is
// not finished, and whether it showed a Stop button, in window.__answer.
const answerRecorderJS = `(() => {
  const rec = window.__answer = {states: [], stop: false};
  const look = () => {
    const m = document.querySelector('#messages .msg.bot');
    if (!m || m.dataset.finished === 'true') return;
    const text = m.querySelector('.msg-body').innerText;
    if (text !== '' && rec.states[rec.states.length - 1] !== text) rec.states.push(text);
    if ([...m.querySelectorAll('.actions button')].some(b => b.textContent === 'Stop')) rec.stop = true;
  };
  new MutationObserver(look).observe(document.body, {subtree: true, childList: true, characterData: true, attributes: true});
  look();
  return true;
})()`

// pendingCard reports whether a card's buttons are a pending request's:
// Approve and Deny, then "Approve similar" where a grant may be made.
func pendingCard(buttons []string) bool {
	return len(buttons) >= 2 && buttons[0] == "Approve" && buttons[1] == "Deny"
}
