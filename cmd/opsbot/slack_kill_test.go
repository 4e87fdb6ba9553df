package main

import (
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

// TestSlackKillLoop is issue 28's acceptance loop on Slack: the real
// binary against the fake Slack (Slack's tiers, its refusals: chat.update
// on a live stream is streaming_state_conflict), with native streaming,
// killed with SIGKILL at a random moment while answers stream and
// approvals wait, and restarted, SLACK_KILL_ITERATIONS times (default 5).
// After each restart, once the thread has settled: every message that was
// a live stream at the kill has stopped, with the "interrupted" note in it
// or below it; no bot message shows less than it showed at the kill; every
// question the bot took is answered in full or told it was cut. At the end
// every waiting approval is approved, and its command runs exactly once.
func TestSlackKillLoop(t *testing.T) {
	n := 5
	if v := os.Getenv("SLACK_KILL_ITERATIONS"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	k := newSlackKill(t)
	for i := range n {
		k.iteration(i)
	}
	k.approveAll()
	t.Logf("%d kills: %d live streams cut, %d questions asked, %d approvals waited through kills", n, k.cut, len(k.questions), len(k.fixes))
	if k.cut == 0 {
		t.Errorf("no kill cut a live stream in %d kills: the loop checked no recovery of one", n)
	}
}

// slackKill is the loop's state.
type slackKill struct {
	t    *testing.T
	fake *slackfake.Server
	dir  string
	cfg  string
	runs string
	llm  string
	bot  *exec.Cmd
	logs *notifyBuffer
	// questions are the threads of the questions the bot took (their
	// mention acknowledged), each with what its full answer ends with.
	questions map[string]string
	fixes     map[string]string // approval asked: marker → thread
	cut       int               // live streams a kill cut
}

const (
	storyEnd    = "word39"
	cutNote     = "interrupted: opsbot restarted"
	killChannel = "C0OPS"
)

func newSlackKill(t *testing.T) *slackKill {
	fake := slackfake.New()
	t.Cleanup(fake.Close)
	fake.AddUser("U0ALICE", "alice")
	fake.AddUser("U0BOB", "bob")
	dir := t.TempDir()
	k := &slackKill{t: t, fake: fake, dir: dir, cfg: filepath.Join(dir, "opsbot.yaml"), runs: filepath.Join(dir, "runs.log"),
		logs: &notifyBuffer{}, questions: map[string]string{}, fixes: map[string]string{}}
	conf := fmt.Sprintf("web:\n  listen: 127.0.0.1:0\nlog:\n  format: json\nstore:\n  path: %q\nbot:\n  data_dir: %q\n"+
		"slack:\n  bot_token: %s\n  app_token: %s\n  api_url: %s\n"+
		"approvals:\n  approvers:\n    - slack:\n        users: [U0BOB]\n",
		filepath.Join(dir, "opsbot.db"), filepath.Join(dir, "data"), slackfake.BotToken, slackfake.AppToken, fake.URL)
	if err := os.WriteFile(k.cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	k.llm = killModel(t, k.runs)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("opsbot's log:\n%s", k.logs)
		}
	})
	k.start()
	return k
}

// start runs `opsbot run` and waits for its Socket Mode connection.
func (k *slackKill) start() {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ANTHROPIC_") && !strings.HasPrefix(kv, "OPENAI_") {
			env = append(env, kv)
		}
	}
	cmd := exec.Command(os.Args[0], "run", "--config", k.cfg)
	cmd.Dir = k.dir
	cmd.Env = append(env, "OPSBOT_BE_MAIN=1", "OPENAI_BASE_URL="+k.llm, "OPENAI_API_KEY=test-key", "OPSBOT_MODEL=fake-model")
	cmd.Stderr = k.logs
	if err := cmd.Start(); err != nil {
		k.t.Fatal(err)
	}
	k.t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	k.bot = cmd
	select {
	case <-k.fake.Connected():
	case <-time.After(2 * time.Minute): // a guard against a hang
		k.t.Fatal("opsbot run never connected to Socket Mode")
	}
}

// iteration asks two stories and one fix, kills the bot at a random
// moment once an answer streams, restarts it and checks.
func (k *slackKill) iteration(i int) {
	k.ask(fmt.Sprintf("tell me a story %d-a", i), storyEnd)
	k.ask(fmt.Sprintf("tell me a story %d-b", i), storyEnd)
	marker := fmt.Sprintf("fix-%d-%08x", i, mrand.Uint32())
	k.fixes[marker] = k.ask("please fix "+marker, "")
	// The kill's random moment, by what Slack shows: once the live
	// answers show a random number of characters more (or none streams
	// any more), whatever the machine's speed.
	k.fake.WaitFor(slackWait, func(s *slackfake.Server) bool { return len(k.live(s)) > 0 })
	at := shownLive(k.live(k.fake)) + mrand.IntN(200)
	k.fake.WaitFor(slackWait, func(s *slackfake.Server) bool {
		live := k.live(s)
		return len(live) == 0 || shownLive(live) >= at
	})
	k.bot.Process.Kill()
	k.bot.Wait()
	shown := map[string]string{}
	for _, m := range k.botMessages(k.fake) {
		shown[m.TS] = m.Shown()
	}
	live := k.live(k.fake)
	k.cut += len(live)
	k.start()
	if !k.fake.WaitFor(slackWait, k.settled) {
		k.t.Fatalf("iteration %d: the threads never settled after the restart:\n%s", i, k.dump())
	}
	k.check(i, shown, live)
}

// ask mentions the bot in a new thread and waits for the mention's
// acknowledgement: then the bot has taken it. end is what its full
// answer ends with ("" for a fix, which waits for approval).
func (k *slackKill) ask(text, end string) string {
	p := k.fake.Mention(killChannel, "U0ALICE", "", text)
	select {
	case <-k.fake.Acked(p.Envelopes[0]):
	case <-time.After(slackWait):
		k.t.Fatalf("the mention %q was never acknowledged", text)
	}
	k.questions[p.Thread] = end
	return p.Thread
}

// botMessages are the bot's messages in the loop's threads.
func (k *slackKill) botMessages(s *slackfake.Server) []slackfake.Message {
	var out []slackfake.Message
	for th := range k.questions {
		for _, m := range s.Thread(killChannel, th) {
			if m.Bot {
				out = append(out, m)
			}
		}
	}
	return out
}

// live are the bot's messages that are live streams now.
func (k *slackKill) live(s *slackfake.Server) []slackfake.Message {
	var out []slackfake.Message
	for _, m := range k.botMessages(s) {
		if m.Streaming && m.Shown() != "" {
			out = append(out, m)
		}
	}
	return out
}

// shownLive is how many characters the live answers show.
func shownLive(live []slackfake.Message) int {
	n := 0
	for _, m := range live {
		n += len(m.Shown())
	}
	return n
}

// settled reports whether no bot message streams and every question is
// told: its full answer, an approval card, or the note.
func (k *slackKill) settled(s *slackfake.Server) bool {
	for th, end := range k.questions {
		text := s.ThreadText(killChannel, th)
		if strings.Contains(text, "(interrupted") || strings.Contains(text, "interrupted:") {
			continue
		}
		if end != "" && !strings.Contains(text, end) || end == "" && !strings.Contains(text, "approve") {
			return false
		}
	}
	for _, m := range k.botMessages(s) {
		if m.Streaming {
			return false
		}
	}
	return true
}

// check counts, after a restart, what must be 0: a cut stream not
// stopped or without the note, a message showing less than at the kill.
func (k *slackKill) check(i int, shown map[string]string, live []slackfake.Message) {
	for _, l := range live {
		m, _ := k.fake.Message(killChannel, l.TS)
		if m.Streaming {
			k.t.Errorf("iteration %d: the stream %s cut by the kill still streams", i, l.TS)
		}
		if !k.noted(l) {
			k.t.Errorf("iteration %d: the stream cut by the kill has no note in or below it:\n%s", i, k.fake.ThreadText(killChannel, l.Thread))
		}
	}
	for ts, before := range shown {
		m, _ := k.fake.Message(killChannel, ts)
		if !strings.HasPrefix(strings.TrimSpace(m.Shown()), strings.TrimSpace(before)) {
			k.t.Errorf("iteration %d: message %s showed %q at the kill, now %q: shortened", i, ts, before, m.Shown())
		}
	}
}

// noted reports whether the note is in message l or a bot message below
// it in its thread.
func (k *slackKill) noted(l slackfake.Message) bool {
	below := false
	for _, m := range k.fake.Thread(killChannel, l.Thread) {
		below = below || m.TS == l.TS
		if below && m.Bot && strings.Contains(m.Shown(), cutNote) {
			return true
		}
	}
	return false
}

// approveAll has bob approve every fix whose card still waits (one a
// kill cut before its card was posted was told so instead), and checks
// that each approved fix's command ran exactly once.
func (k *slackKill) approveAll() {
	clicked := 0
	for marker, th := range k.fixes {
		card := ""
		for _, m := range k.fake.Thread(killChannel, th) {
			if m.Bot && slices.Contains(m.Buttons(), "approve") {
				card = m.TS
			}
		}
		if card == "" {
			continue
		}
		clicked++
		k.fake.Click(killChannel, card, "U0BOB", "approve")
		ok := k.fake.WaitFor(slackWait, func(*slackfake.Server) bool {
			b, _ := os.ReadFile(k.runs)
			return strings.Contains(string(b), marker)
		})
		b, _ := os.ReadFile(k.runs)
		if n := strings.Count(string(b), marker); !ok || n != 1 {
			k.t.Errorf("the approved fix %s ran %d times; want once:\n%s", marker, n, k.fake.ThreadText(killChannel, th))
		}
	}
	if clicked == 0 {
		k.t.Errorf("no approval waited through the kills: the loop proves nothing of them")
	}
}

// dump is every thread of the loop, the unsettled ones first, and the
// bot's messages still streaming.
func (k *slackKill) dump() string {
	var b strings.Builder
	for th, end := range k.questions {
		text := k.fake.ThreadText(killChannel, th)
		if !strings.Contains(text, "interrupted") && (end != "" && !strings.Contains(text, end) || end == "" && !strings.Contains(text, "approve")) {
			b.WriteString("NOT TOLD:\n" + text + "\n---\n")
		}
	}
	for _, m := range k.botMessages(k.fake) {
		if m.Streaming {
			fmt.Fprintf(&b, "STILL STREAMING %s: %q\n", m.TS, m.Shown())
		}
	}
	return b.String() + "\n" + k.logs.String()
}

// killModel serves the loop's scripted model, OpenAI-compatible (fakeLLM's
// wire format): "please fix MARKER" asks to run `echo MARKER >> runs`
// (which needs approval); "tell me a story" streams 40 words, 25 ms
// apart, so that kills land mid-stream; a tool result is answered with its
// first line.
func killModel(t *testing.T, runs string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req fakeLLMRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		f := &fakeLLM{}
		w.Header().Set("Content-Type", "text/event-stream")
		role, text := req.last()
		switch {
		case role == "tool":
			f.text(w, []string{"The command said: ", firstOutputLine(text)})
		case strings.Contains(text, "please fix "):
			f.toolCall(w, "echo "+fixMarker.FindString(text)+" >> "+runs)
		case strings.Contains(text, "tell me a story"):
			f.chunk(w, map[string]any{"role": "assistant", "content": ""}, nil)
			for i := range 40 {
				select {
				case <-r.Context().Done():
					return
				case <-time.After(25 * time.Millisecond): // the model's pace
				}
				f.chunk(w, map[string]any{"content": fmt.Sprintf("word%d ", i)}, nil)
			}
			f.chunk(w, map[string]any{}, "stop")
			fmt.Fprint(w, "data: [DONE]\n\n")
		default:
			f.text(w, []string{"ok"})
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// fixMarker is what each fix's command carries.
var fixMarker = regexp.MustCompile(`fix-[0-9]+-[0-9a-f]{8}`)
