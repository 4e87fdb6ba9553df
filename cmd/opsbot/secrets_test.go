package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/opsbot/opsbot/approvals/redact/redacttest"
)

// ownEnv is opsbot's environment as an operator's deployment gives it: the
// model key the config names as ${OPENAI_API_KEY}, and other credentials
// that happen to be there.
var ownEnv = []string{
	"OPENAI_API_KEY=" + redacttest.OpenAIKey,
	"OPSBOT_WEB_API_KEY=" + redacttest.WebAPIKey,
	"AWS_ACCESS_KEY_ID=" + redacttest.AWSAccessKey,
	"AWS_SECRET_ACCESS_KEY=" + redacttest.AWSSecretKey,
	"SLACK_BOT_TOKEN=" + redacttest.SlackToken,
	"GITHUB_TOKEN=" + redacttest.GitHubToken,
	"DATABASE_URL=" + redacttest.PostgresURL,
}

// The acceptance of issue 11: opsbot runs with secrets in its environment
// and config; the requester prints seeded secrets with `run local`, prints
// opsbot's own environment through /proc/$PPID/environ, and asks the
// agent, which reads the file and quotes a key back in pieces. None of
// the seeds is in the web API, the event stream, the database file, the
// model's requests or the log; the chat shows "[redacted …]"; opsbot's
// environment shows nothing of its secret variables.
func TestSeededSecretsLeaveNoTrace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seeds := filepath.Join(dir, "notes.txt")
	os.WriteFile(seeds, []byte(redacttest.Output()), 0o600)
	llm := &fakeLLM{t: t, key: redacttest.OpenAIKey, commands: map[string]string{"notes": "cat " + seeds},
		say: []string{"The key was ", redacttest.AWSAccessKey[:9], redacttest.AWSAccessKey[9:] + " and ", redacttest.GitHubToken[:20], redacttest.GitHubToken[20:] + " ok."}}
	cfg := filepath.Join(dir, "opsbot.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("web:\n  listen: 127.0.0.1:0\nlog:\n  level: debug\n  format: json\n"+
		"agent:\n  provider: openai\n  base_url: %q\n  api_key: ${OPENAI_API_KEY}\n  model: fake-model\n"+
		"approvals:\n  approvers:\n    - web:\n        users: [alice, bob]\n", llm.serve(t))), 0o600)
	cmd := opsbot(t, dir, "run", "--config", cfg)
	cmd.Env = append(cmd.Env, ownEnv...)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	logs := &lockedBuffer{}
	base := waitForListen(t, io.TeeReader(stderr, logs))
	c := &chatClient{t: t, base: base}
	c.listen()

	environ := c.run("alice", `@opsbot run local cat /proc/$PPID/environ | tr "\0" "\n"`)
	for _, name := range []string{"OPENAI_API_KEY", "OPSBOT_WEB_API_KEY", "AWS_SECRET_ACCESS_KEY"} {
		if strings.Contains(environ, name) {
			t.Errorf("opsbot's environment still shows %s:\n%s", name, environ)
		}
	}
	if !strings.Contains(environ, "PATH=") {
		t.Errorf("the command did not print opsbot's environment:\n%s", environ)
	}
	env := c.run("alice", "@opsbot run local env")
	for _, kv := range ownEnv {
		if name, _, _ := strings.Cut(kv, "="); strings.Contains(env, name) {
			t.Errorf("a local command inherited %s:\n%s", name, env)
		}
	}
	file := c.run("alice", "@opsbot run local cat "+seeds)
	if !strings.Contains(file, "AWS_SECRET_ACCESS_KEY=[redacted opsbot-secret]") || !strings.Contains(file, "[redacted private-key]") ||
		!strings.Contains(file, "Bearer [redacted jwt]") {
		t.Errorf("the output does not show what was redacted:\n%s", file)
	}
	c.run("alice", "@opsbot what do the notes say?")
	c.run("alice", "@opsbot and the key?")

	var api []string
	for _, th := range c.threads() {
		api = append(api, c.get("/api/threads/"+th+"/messages"))
	}
	requests, _ := json.Marshal(llm.allRequests())
	if len(llm.allRequests()) < 3 {
		t.Errorf("the model was asked %d times, want 3", len(llm.allRequests()))
	}
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
	all := redacttest.Secrets()
	redacttest.AssertNoSecret(t, all, api...)
	redacttest.AssertNoSecret(t, all, c.stream())
	redacttest.AssertNoSecret(t, all, string(requests))
	redacttest.AssertNoSecret(t, all, logs.String())
	for _, f := range []string{"opsbot.db", "opsbot.db-wal"} {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		redacttest.AssertNoSecret(t, all, string(b))
	}
	if t.Failed() {
		t.Logf("stream:\n%s", c.stream())
	}
}

// chatClient is a person's script against the web API: it posts, clicks,
// and follows the event stream.
type chatClient struct {
	t    *testing.T
	base string

	mu      sync.Mutex
	raw     bytes.Buffer
	msgs    map[string]map[string]any // by id, the latest view
	thread  []string
	changed chan struct{}
}

// listen follows /api/events from the start, keeping every byte.
func (c *chatClient) listen() {
	c.msgs, c.changed = map[string]map[string]any{}, make(chan struct{})
	resp, err := http.Get(c.base + "/api/events?since=0")
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { resp.Body.Close() })
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			line := sc.Text()
			c.mu.Lock()
			c.raw.WriteString(line + "\n")
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				var m map[string]any
				if json.Unmarshal([]byte(data), &m) == nil && m["id"] != nil {
					c.msgs[fmt.Sprint(m["id"])] = m
					close(c.changed)
					c.changed = make(chan struct{})
				}
			}
			c.mu.Unlock()
		}
	}()
}

func (c *chatClient) stream() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.raw.String()
}

func (c *chatClient) threads() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.thread...)
}

func (c *chatClient) post(path string, body any) map[string]any {
	c.t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(c.base+path, "application/json", bytes.NewReader(b))
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode >= 300 {
		c.t.Fatalf("POST %s: %d %v", path, resp.StatusCode, out)
	}
	return out
}

func (c *chatClient) get(path string) string {
	c.t.Helper()
	resp, err := http.Get(c.base + path)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// run starts a thread with text and waits for the bot's finished answer
// to it, approving (as bob) any card on the way; it returns the answer.
func (c *chatClient) run(user, text string) string {
	c.t.Helper()
	res := c.post("/api/messages", map[string]any{"channel": "ops", "user": user, "text": text})
	thread := fmt.Sprint(res["thread"])
	c.mu.Lock()
	c.thread = append(c.thread, thread)
	c.mu.Unlock()
	limit := time.NewTimer(2 * time.Minute) // a hang, not a speed bound
	defer limit.Stop()
	// The answer is the message that had a Stop button while it grew;
	// cards have Approve and Deny.
	approved, streamed := map[string]bool{}, map[string]bool{}
	for {
		c.mu.Lock()
		changed := c.changed
		var answer string
		var card map[string]any
		for id, m := range c.msgs {
			if m["thread"] != thread || m["bot"] != true {
				continue
			}
			buttons, _ := m["buttons"].([]any)
			for _, b := range buttons {
				if b.(map[string]any)["action_id"] == "stop" {
					streamed[id] = true
				}
			}
			switch {
			case len(buttons) >= 2 && !approved[id]: // Approve, Deny (and Approve similar)
				card = m
			case streamed[id] && m["finished"] == true && len(buttons) == 0:
				answer = fmt.Sprint(m["text"])
			}
		}
		c.mu.Unlock()
		if card != nil {
			b := card["buttons"].([]any)[0].(map[string]any)
			approved[fmt.Sprint(card["id"])] = true
			c.post("/api/actions", map[string]any{"message_id": card["id"], "action_id": b["action_id"], "value": b["value"], "user": "bob"})
			continue
		}
		if answer != "" {
			return answer
		}
		select {
		case <-changed:
		case <-limit.C:
			c.t.Fatalf("no finished answer to %q; stream:\n%s", text, c.stream())
		}
	}
}

// The redactor knows the config's secret values, not its file names or
// hashes; the environment's secret values too.
func TestConfigSecretsAreItsSecretKeys(t *testing.T) {
	t.Parallel()
	yaml := "web:\n  api_key: " + redacttest.WebAPIKey + "\nagent:\n  provider: anthropic\n  api_key: ${MY_LLM}\n  max_tokens: 2048\n" +
		"ssh:\n  known_hosts: /etc/opsbot/known_hosts_file\n  identity_files: [/etc/opsbot/id_ed25519]\n"
	cfg, err := parseConfig("c.yaml", []byte(yaml), env(map[string]string{"MY_LLM": redacttest.AnthropicKey}))
	if err != nil {
		t.Fatal(err)
	}
	got := secretFields(reflect.ValueOf(cfg).Elem())
	if !slices.Contains(got, redacttest.WebAPIKey) || !slices.Contains(got, redacttest.AnthropicKey) || len(got) != 2 {
		t.Errorf("secret values of the config = %q; want web.api_key and agent.api_key only", got)
	}
	if out := cfg.redactor().String("key " + redacttest.AnthropicKey); strings.Contains(out, redacttest.AnthropicKey) {
		t.Errorf("the redactor does not know agent.api_key: %q", out)
	}
}
