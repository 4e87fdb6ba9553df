package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/checks"
	"github.com/opsbot/opsbot/hosts/sshtest"
)

// labFleet is two SSH hosts, lab-1 and lab-2 in group lab, each on its own
// real sshd so that one can be stopped alone.
type labFleet struct {
	one, two *sshtest.Server
	yaml     string // the ssh and hosts sections
}

func newLabFleet(t *testing.T) labFleet {
	t.Helper()
	one := sshtest.Start(t, sshtest.Options{})
	two := sshtest.Start(t, sshtest.Options{})
	known := sshtest.KnownHostsOf(t, one, two)
	yaml := fmt.Sprintf(`ssh:
  known_hosts: %s
  identity_files: [%s, %s]
  user: %s
  connect_timeout: 5s
hosts:
  - name: lab-1
    address: %s
    groups: [lab]
  - name: lab-2
    address: %s
    groups: [lab]
`, known, one.IdentityFile, two.IdentityFile, one.User, one.Addr(), two.Addr())
	return labFleet{one: one, two: two, yaml: yaml}
}

// labChecks are the acceptance's two checks and a schedule posting to the
// web chat's channel ops, every cron.
func labChecks(cron string) string {
	return fmt.Sprintf(`checks:
  - name: shell
    targets: group:lab
    command: echo active
    expect: {output_matches: '^active$'}
  - name: disk
    targets: group:lab
    command: df -P / | awk 'NR==2 {print $5+0}'
    timeout: 30s
    expect: {exit: 0, fail_above: 100}
schedules:
  - name: lab
    cron: %q
    checks: [shell, disk]
    post_to: [{platform: web, channel: ops}]
`, cron)
}

// chatMessage is a message of the web API, as its event stream sends it.
type chatMessage struct {
	ID     string `json:"id"`
	Thread string `json:"thread"`
	Bot    bool   `json:"bot"`
	Text   string `json:"text"`
}

// watchChannel follows the web chat's event stream of a channel: every
// message posted or edited there arrives on the returned channel.
func watchChannel(t *testing.T, base, channel string) <-chan chatMessage {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/events?channel="+channel, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan chatMessage, 256)
	go func() {
		defer resp.Body.Close()
		lines := bufio.NewScanner(resp.Body)
		lines.Buffer(make([]byte, 1<<20), 1<<22)
		event := ""
		for lines.Scan() {
			line := lines.Text()
			if e, ok := strings.CutPrefix(line, "event: "); ok {
				event = e
			}
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok || event != "message" {
				continue
			}
			var m chatMessage
			if json.Unmarshal([]byte(data), &m) == nil {
				select {
				case out <- m:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out
}

// waitFor returns the first message from ms that ok accepts.
func waitFor(t *testing.T, ms <-chan chatMessage, what string, ok func(chatMessage) bool) chatMessage {
	t.Helper()
	guard := time.After(60 * time.Second) // a hang, not a speed bound
	for {
		select {
		case m := <-ms:
			if ok(m) {
				return m
			}
		case <-guard:
			t.Fatalf("no message in the web chat: %s", what)
		}
	}
}

// say posts a message as alice into the web chat.
func say(t *testing.T, base, thread, text string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"channel": "ops", "thread": thread, "user": "alice", "text": text})
	resp, err := http.Post(base+"/api/messages", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ans struct{ Thread string }
	if resp.StatusCode != http.StatusCreated || json.NewDecoder(resp.Body).Decode(&ans) != nil {
		t.Fatalf("post %q: %s", text, resp.Status)
	}
	return ans.Thread
}

// isReport accepts the day's summary message of schedule lab.
func isReport(m chatMessage) bool {
	return m.Bot && strings.HasPrefix(m.Text, "**Health · lab**")
}

// startBot runs the bot in-process on a free loopback port with its
// database in a temporary directory, config yaml appended, and returns the
// chat's base URL. The bot stops when the test ends.
func startBot(t *testing.T, yaml string, hooks runHooks) string {
	t.Helper()
	dir := t.TempDir()
	yaml = fmt.Sprintf("web:\n  listen: 127.0.0.1:0\nstore:\n  path: %q\nbot:\n  data_dir: %q\n",
		filepath.Join(dir, "opsbot.db"), filepath.Join(dir, "data")) + yaml
	cfg, err := parseConfig(filepath.Join(dir, "opsbot.yaml"), []byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan string, 1), make(chan error, 1)
	hooks.ready = ready
	go func() { done <- serveBot(ctx, cfg, log, hooks) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("the bot after cancel: %v", err)
			}
		case <-time.After(60 * time.Second): // a hang, not a speed bound
			t.Errorf("the bot did not return after its context ended")
		}
		if t.Failed() {
			t.Logf("opsbot's log:\n%s", logs)
		}
	})
	select {
	case addr := <-ready:
		return "http://" + addr
	case err := <-done:
		t.Fatalf("the bot: %v\n%s", err, logs)
	case <-time.After(60 * time.Second):
		t.Fatalf("the bot did not start listening\n%s", logs)
	}
	return ""
}

// The acceptance, as a new user tries it: two checks on two
// loopback sshd hosts, a schedule posting to the web chat. A report
// appears; with one sshd stopped the next report leads with that host;
// started again, it is "recovered". The test runs the schedule's ticks
// itself (RunNow, then Publish, as a cron tick does) rather than waiting
// for the clock. In the chat, `health` lists the schedule with its last
// result and `health lab` runs it into the thread.
func TestScheduledHealthReportFollowsAnOutage(t *testing.T) {
	t.Parallel()
	fleet := newLabFleet(t)
	var sched *checks.Scheduler
	var pub *checks.Publisher
	base := startBot(t, fleet.yaml+labChecks("@hourly"), runHooks{checks: func(s *checks.Scheduler, p *checks.Publisher) { sched, pub = s, p }})
	ms := watchChannel(t, base, "ops")
	tick := func() {
		t.Helper()
		rep, err := sched.RunNow(context.Background(), "lab")
		if err != nil {
			t.Fatal(err)
		}
		sc, _ := sched.Schedule("lab")
		if err := pub.Publish(context.Background(), sc, rep); err != nil {
			t.Fatal(err)
		}
	}

	tick()
	first := waitFor(t, ms, "a first report", func(m chatMessage) bool { return isReport(m) && strings.Contains(m.Text, "✓ 4 ok") })
	if !strings.Contains(first.Text, "first run") {
		t.Errorf("first report: %q", first.Text)
	}

	if err := fleet.two.Stop(); err != nil {
		t.Fatal(err)
	}
	tick()
	down := waitFor(t, ms, "a report with lab-2 down", func(m chatMessage) bool { return isReport(m) && strings.Contains(m.Text, "new failure") })
	lines := strings.Split(down.Text, "\n")
	if len(lines) < 2 || !strings.Contains(lines[1], "lab-2") || !strings.Contains(lines[1], "new") || strings.Contains(down.Text, "lab-1") {
		t.Errorf("the report does not lead with lab-2 as new:\n%s", down.Text)
	}
	if down.ID != first.ID {
		t.Errorf("the day's summary is a new message (%s), not the first one (%s) edited", down.ID, first.ID)
	}
	// An edit notifies no one: the change is also a new message.
	news := waitFor(t, ms, "an announcement of lab-2 down", func(m chatMessage) bool {
		return m.Bot && strings.HasPrefix(m.Text, "✗ **Health · lab**: 1 new failure — lab-2 unreachable")
	})
	if news.ID == first.ID || news.Thread == "" || news.Thread != first.Thread {
		t.Errorf("the announcement %s in thread %s; want a new message in the day's thread %s", news.ID, news.Thread, first.Thread)
	}

	if err := fleet.two.Start(); err != nil {
		t.Fatal(err)
	}
	tick()
	up := waitFor(t, ms, "a report with lab-2 recovered", func(m chatMessage) bool { return isReport(m) && strings.Contains(m.Text, "recovered") })
	if !strings.Contains(up.Text, "✓ 4 ok") {
		t.Errorf("recovered report: %q", up.Text)
	}
	waitFor(t, ms, "an announcement of lab-2 back", func(m chatMessage) bool {
		return m.Bot && m.Text == "✓ **Health · lab**: 1 recovered — lab-2 reachable again"
	})

	thread := say(t, base, "", "@opsbot health")
	waitFor(t, ms, "the list of schedules", func(m chatMessage) bool {
		return m.Bot && m.Thread == thread && strings.Contains(m.Text, "`lab`") && strings.Contains(m.Text, "last run") && strings.Contains(m.Text, "recovered")
	})
	say(t, base, thread, "@opsbot health lab")
	waitFor(t, ms, "a report run into the thread", func(m chatMessage) bool {
		return isReport(m) && m.Thread == thread && strings.Contains(m.Text, "✓ 4 ok")
	})
}

// writeConfig writes yaml into a config file in a new directory, with the
// database there too.
func writeConfig(t *testing.T, yaml string) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "opsbot.yaml")
	yaml = fmt.Sprintf("store:\n  path: %q\n", filepath.Join(dir, "opsbot.db")) + yaml
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// `opsbot health run` prints the report and exits 0 when all is well, 1
// when a check failed; `health list` shows the last result.
func TestHealthRunExitsOneWhenACheckFails(t *testing.T) {
	t.Parallel()
	fleet := newLabFleet(t)
	cfg := writeConfig(t, fleet.yaml+labChecks("@hourly"))

	code, out, stderr := runOpsbot(t, "health", "list", "--config", cfg)
	if code != 0 || !strings.Contains(out, "lab\t@hourly\tchecks: shell, disk") || !strings.Contains(out, "not run yet") {
		t.Errorf("health list before a run: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr = runOpsbot(t, "health", "run", "--config", cfg)
	if code != 0 || !strings.HasPrefix(out, "Health · lab — ✓ 4 ok — first run\n") {
		t.Errorf("health run, all up: exit %d\n%s%s", code, out, stderr)
	}
	if err := fleet.two.Stop(); err != nil {
		t.Fatal(err)
	}
	code, out, stderr = runOpsbot(t, "health", "run", "lab", "--config", cfg)
	if code != 1 || !strings.HasPrefix(out, "Health · lab — ✓ 2 ok · ⊘ 1 unreachable — 1 new failure since") || !strings.Contains(out, "lab-2") {
		t.Errorf("health run, lab-2 down: exit %d; want 1\n%s%s", code, out, stderr)
	}
	code, out, _ = runOpsbot(t, "health", "list", "--config", cfg)
	if code != 0 || !strings.Contains(out, "⊘ 1 unreachable") {
		t.Errorf("health list after the run: exit %d\n%s", code, out)
	}
	code, _, stderr = runOpsbot(t, "health", "run", "nightly", "--config", cfg)
	if code != 2 || !strings.Contains(stderr, `there is no schedule "nightly": the schedules are lab`) {
		t.Errorf("health run nightly: exit %d; want 2\n%s", code, stderr)
	}
}

// A check whose command needs approval is a config error: a scheduled
// run never waits for a click.
func TestConfigCheckRefusesACheckThatNeedsApproval(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, `checks:
  - name: cleanup
    targets: local
    command: rm -rf /tmp/opsbot-cache
schedules:
  - name: nightly
    cron: "@daily"
    checks: [cleanup]
`)
	code, _, stderr := runOpsbot(t, "config", "check", "--config", cfg)
	want := `opsbot.yaml:6: checks[0].command: check "cleanup" needs approval on host local (the policy says`
	if code != 2 || !strings.Contains(stderr, want) {
		t.Errorf("config check: exit %d; want 2 with %q\n%s", code, want, stderr)
	}
	if code, _, stderr := runOpsbot(t, "run", "--config", cfg); code != 2 || !strings.Contains(stderr, `check "cleanup" needs approval`) {
		t.Errorf("run: exit %d; want 2\n%s", code, stderr)
	}
}

// `opsbot health run` posts nothing, so a config whose slack and discord
// sections take their tokens from an environment this shell lacks still
// runs it; the report is plain text for a terminal: no **bold**, no
// backticks, the grid indented without its fences.
func TestHealthRunNeedsNoChatTokensAndPrintsPlainText(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, `checks:
  - name: shell
    targets: local
    command: echo inactive
    expect: {output_matches: '^active$'}
schedules:
  - name: lab
    cron: "@hourly"
    checks: [shell]
    post_to: [{platform: slack, channel: C0123456789}]
    notify: ["<!subteam^S0123456789>"]
slack:
  bot_token: ${OPSBOT_TEST_UNSET_SLACK_BOT_TOKEN}
  app_token: ${OPSBOT_TEST_UNSET_SLACK_APP_TOKEN}
discord:
  token: ${OPSBOT_TEST_UNSET_DISCORD_TOKEN}
agent:
  provider: anthropic
  api_key: ${OPSBOT_TEST_UNSET_ANTHROPIC_KEY}
`)
	code, out, stderr := runOpsbot(t, "health", "run", "--config", cfg)
	if code != 1 || strings.Contains(stderr, "environment variable") {
		t.Fatalf("health run: exit %d; want 1 (the check fails), with no word of the chat tokens\n%s%s", code, out, stderr)
	}
	for _, want := range []string{"Health · lab — ✗ 1 failing", "Failing (1)\n✗ local · shell 'inactive' — output does not match ^active$",
		"Grid — one character per check: shell; '.' ok", "\n  local X\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("health run printed\n%s\nwant %q in it", out, want)
		}
	}
	if strings.Contains(out, "**") || strings.Contains(out, "`") {
		t.Errorf("health run printed markdown:\n%s", out)
	}
	if code, _, stderr := runOpsbot(t, "config", "check", "--config", cfg); code != 2 || !strings.Contains(stderr, "OPSBOT_TEST_UNSET_SLACK_BOT_TOKEN is not set") {
		t.Errorf("config check: exit %d; want 2, still naming the unset token\n%s", code, stderr)
	}
}

// `opsbot config check` reports a schedule's notify that would never
// ping, at its line and key, with what to write instead.
func TestConfigCheckRefusesANotifyByName(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, `checks:
  - name: shell
    targets: local
    command: echo active
schedules:
  - name: nightly
    cron: "@daily"
    checks: [shell]
    post_to: [{platform: slack, channel: C0123456789}]
    notify_as: channel
    notify:
      - "<!subteam^S0123456789>"
      - "@oncall"
`)
	code, _, stderr := runOpsbot(t, "config", "check", "--config", cfg)
	want := `opsbot.yaml:15: schedules[0].notify[1]: "@oncall" is a name, and a mention needs an id: write a Slack person <@U0123456789>`
	if code != 2 || !strings.Contains(stderr, want) || strings.Count(stderr, "notify") != 1 {
		t.Errorf("config check: exit %d; want 2 with %q alone\n%s", code, want, stderr)
	}
}
