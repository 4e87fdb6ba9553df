package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/hosts/sshtest"
)

// TestKilledBotLeavesNoCommandRunning: `kill -9` of `opsbot run` while a
// chat `run local sleep …` runs; the next start, before it serves, ends
// the sleep (a command runs in a process group of its own, so it outlived
// the bot) and says in the thread that it was cut off.
func TestKilledBotLeavesNoCommandRunning(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	os.WriteFile(cfg, []byte("web:\n  listen: 127.0.0.1:0\nlog:\n  format: json\n"), 0o600)
	sleep := fmt.Sprintf("sleep 600.%06d", rand.IntN(1_000_000))

	bot, base := startRun(t, dir, cfg)
	// The command says when its sleep exists: "sleep-forked" is printed
	// after the sleep was forked (and appears only in the output, not in
	// the command's text), so the test waits on that output, not on time.
	// No "&": a background child needs approval now. The sleep is the
	// pipeline's first command; the second prints once pgrep sees it.
	command := sleep + " | { until pgrep -f '^" + sleep + "$' >/dev/null; do :; done; printf 'sleep-%s\\n' forked; cat; }"
	thread := postMessage(t, base, "@opsbot run local "+command)
	awaitInThread(t, base, thread, "sleep-forked")
	procs, err := sshtest.Find(sleep)
	if err != nil || len(procs) == 0 {
		t.Fatalf("no process %q after it printed started (%v)", sleep, err)
	}
	defer func() {
		for _, p := range procs {
			p.Close()
		}
	}()
	bot.Process.Kill() // SIGKILL: nothing of the bot's own clean-up runs
	bot.Wait()
	// The command's shell, its group's leader, dies with the bot (the
	// kernel's parent-death signal); the sleep it forked runs on, for the
	// restart's sweep to end.
	alive := 0
	for _, p := range procs {
		if !p.Exited() {
			alive++
		}
	}
	if alive == 0 {
		t.Fatalf("the sleep died with the bot: the test would prove nothing")
	}

	bot, base = startRun(t, dir, cfg)
	defer bot.Process.Kill()
	for _, p := range procs {
		if !p.Wait(2 * time.Minute) { // a bound on an event, not a speed
			t.Fatalf("process %d (%s) still runs after the restart", p.Pid, sleep)
		}
	}
	if left := sshtest.Processes(sleep); len(left) > 0 {
		t.Errorf("still running after the restart: %v", left)
	}
	texts := threadTexts(t, base, thread)
	// The sandbox's launcher takes its command along when the bot dies,
	// so by the restart it may have ended already; either way the thread
	// says it was cut off.
	stopped := "Cut off: `" + command + "` on local was still running when opsbot restarted; it has been stopped"
	ended := "Cut off: `" + command + "` on local was running when opsbot stopped; it had ended by the restart"
	if !strings.Contains(texts, stopped) && !strings.Contains(texts, ended) {
		t.Errorf("the thread does not say the command was cut off:\n%s", texts)
	}
}

// startRun starts `opsbot run` in dir and returns it with its base URL.
func startRun(t *testing.T, dir, cfg string) (*exec.Cmd, string) {
	t.Helper()
	cmd := opsbot(t, dir, "run", "--config", cfg)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, waitForListen(t, stderr)
}

// postMessage starts a thread with text and returns the thread's id.
func postMessage(t *testing.T, base, text string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"channel": "ops", "user": "alice", "text": text})
	resp, err := http.Post(base+"/api/messages", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var res struct{ Thread string }
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("post: %d %v", resp.StatusCode, err)
	}
	return res.Thread
}

// awaitInThread follows the thread's event stream until a message in it
// holds text; the stream's end or two minutes (a hang guard, not a speed
// bound) without it fail the test.
func awaitInThread(t *testing.T, base, thread, text string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/events?thread="+thread+"&since=0", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	for lines.Scan() {
		if l := lines.Text(); strings.HasPrefix(l, "data:") && strings.Contains(l, `"bot":true`) && strings.Contains(l, text) {
			return
		}
	}
	t.Fatalf("the thread never showed %q (%v)", text, lines.Err())
}

// threadTexts is the text of every message in thread, one per line.
func threadTexts(t *testing.T, base, thread string) string {
	t.Helper()
	resp, err := http.Get(base + "/api/threads/" + thread + "/messages")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var res struct{ Messages []struct{ Text string } }
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("thread messages: %v: %.200s", err, raw)
	}
	var b strings.Builder
	for _, m := range res.Messages {
		b.WriteString(m.Text + "\n")
	}
	return b.String()
}

// TestOwnListenerOnAChosenPortIsKnown: with web.listen on port 0 the
// system picks the port, and the policy knows the port it picked as the
// bot's own listener: a curl of its /healthz runs at once (before, the
// policy knew "127.0.0.1:0" and asked for an approval).
func TestOwnListenerOnAChosenPortIsKnown(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	os.WriteFile(cfg, []byte("web:\n  listen: 127.0.0.1:0\nlog:\n  format: json\n"), 0o600)
	_, base := startRun(t, dir, cfg)
	thread := postMessage(t, base, "@opsbot run local curl -s -o /dev/null -w 'status-%{http_code}' "+base+"/healthz")
	awaitInThread(t, base, thread, "status-200")
}
