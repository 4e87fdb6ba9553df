package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func TestConfigErrorsNameFileLineAndKey(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		yaml string
		env  map[string]string
		want []string // substrings of the error
	}{
		{"unknown key", "log:\n  level: info\n  levle: debug\n", nil,
			[]string{"bad.yaml:3:", "log.levle", "unknown key", `did you mean "level"`}},
		{"unknown top-level key", "stroe:\n  path: x.db\n", nil,
			[]string{"bad.yaml:1:", "stroe", `did you mean "store"`}},
		{"unknown key in a list item", "ssh:\n  known_hosts: /k\nhosts:\n  - name: a\n    address: a:22\n    gruops: [web]\n", nil,
			[]string{"bad.yaml:6:", "hosts[0].gruops", `did you mean "groups"`}},
		{"wrong type", "store:\n  busy_timeout: soon\n", nil,
			[]string{"bad.yaml:2:", "store.busy_timeout", "expected a duration like 60s"}},
		{"wrong type int", "agent:\n  max_steps: many\n", nil,
			[]string{"bad.yaml:2:", "agent.max_steps", "expected a whole number"}},
		{"missing secret variable", "agent:\n  provider: anthropic\n  api_key: ${ANTHROPIC_API_KEY}\n", map[string]string{},
			[]string{"bad.yaml:3:", "agent.api_key", "ANTHROPIC_API_KEY is not set"}},
		{"required secret absent", "web:\n  listen: 0.0.0.0:8080\n", nil,
			[]string{"bad.yaml:1:", "web.api_key", "required when listen"}},
		{"validation of a section", "log:\n  format: xml\n", nil,
			[]string{"bad.yaml:2:", "log.format", "auto, text or json"}},
		{"hosts need known_hosts", "hosts:\n  - name: a\n    address: 10.0.0.1:22\n", nil,
			[]string{"bad.yaml", "ssh.known_hosts", "required"}},
		{"yaml syntax", "log:\n  level: [\n", nil, []string{"bad.yaml:"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := parseConfig("bad.yaml", []byte(c.yaml), env(c.env))
			if err == nil {
				t.Fatal("config accepted")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestConfigReportsEveryProblemAtOnce(t *testing.T) {
	t.Parallel()
	_, err := parseConfig("c.yaml", []byte("log:\n  levle: x\nstore:\n  pth: a\n  busy_timeout: x\n"), env(nil))
	if n := len(flatten(err)); n != 3 {
		t.Fatalf("got %d errors, want 3: %v", n, err)
	}
}

func TestConfigEnvExpansion(t *testing.T) {
	t.Parallel()
	yaml := `web:
  listen: 0.0.0.0:${PORT}
  api_key: ${WEB_KEY}
agent:
  provider: anthropic
  api_key: "${KEY}"
  max_steps: ${STEPS:-7}
  model: "$${LITERAL}"
  base_url: ${BASE:-http://127.0.0.1:11434/v1}
`
	vars := map[string]string{"PORT": "9090", "WEB_KEY": "w: not yaml # really", "KEY": "sk-ant-123"}
	cfg, err := parseConfig("c.yaml", []byte(yaml), env(vars))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Web.Listen != "0.0.0.0:9090" || cfg.Web.APIKey != "w: not yaml # really" {
		t.Errorf("web = %+v", cfg.Web)
	}
	if cfg.Agent.APIKey != "sk-ant-123" || cfg.Agent.MaxSteps != 7 || cfg.Agent.Model != "${LITERAL}" || cfg.Agent.BaseURL != "http://127.0.0.1:11434/v1" {
		t.Errorf("agent = %+v", cfg.Agent)
	}
}

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	for _, data := range []string{"", "log:\n  level: debug\n"} {
		cfg, err := parseConfig("c.yaml", []byte(data), env(nil))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Store.Path != "opsbot.db" || cfg.Web.Listen != "127.0.0.1:8080" || cfg.Store.BusyTimeout != 10*time.Second {
			t.Errorf("defaults not applied: %+v %+v", cfg.Store, cfg.Web)
		}
	}
}

// The example documents every key: it must load, and it must use them all.
func TestExampleConfigLoadsAndCoversEveryKey(t *testing.T) {
	t.Parallel()
	path := filepath.Join("..", "..", "deploy", "opsbot.example.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := parseConfig(path, data, env(map[string]string{}))
	if err != nil {
		t.Fatalf("the example config does not load: %v", err)
	}
	// A list's key is documented when any of its items shows it: the
	// alert sources' keys differ by type.
	anyItem := regexp.MustCompile(`\[\d+\]`)
	shown := map[string]bool{}
	for k := range cfg.lines {
		shown[anyItem.ReplaceAllString(k, "[0]")] = true
	}
	for _, key := range allKeys(Config{}) {
		if !shown[key] && !deprecatedKeys[key] {
			t.Errorf("deploy/opsbot.example.yaml does not document %s", key)
		}
	}
}

func TestConfigFileErrors(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "missing.yaml")
	_, err := loadConfig(path)
	if want := path + ": no such file: check the path given to --config (deploy/opsbot.example.yaml is a file to start from)"; err == nil || err.Error() != want {
		t.Errorf("missing file: %v, want %q", err, want)
	}
}

// config check's words: what is expected and what was found, never the
// parser's jargon; each problem with file:line and key, all of them at
// once, in the order of the file.
func TestConfigProblemsInPlainWords(t *testing.T) {
	t.Parallel()
	const duration = "expected a duration like 60s (a number and its unit: ms, s, m or h)"
	cases := []struct {
		name string
		yaml string
		want []string
	}{
		{"a number for a duration", "exec:\n  timeout: 60\n",
			[]string{"c.yaml:2: exec.timeout: " + duration + ", not 60"}},
		{"a word for a number", "exec:\n  concurrency: lots\n",
			[]string{`c.yaml:2: exec.concurrency: expected a whole number, not "lots"`}},
		{"a list for a duration", "store:\n  busy_timeout: [1]\n",
			[]string{"c.yaml:2: store.busy_timeout: " + duration + ", not a list"}},
		{"a word for a list", "hosts: web-1\n",
			[]string{`c.yaml:1: hosts: expected a list: [a, b], or one '- ' item per line below the key, not "web-1"`}},
		{"a word for a yes/no", "approvals:\n  allow_self_approval: maybe\n",
			[]string{`c.yaml:2: approvals.allow_self_approval: expected true or false, not "maybe"`}},
		{"a value for a section", "web: 8080\n",
			[]string{"c.yaml:1: web: expected keys indented below this one, not 8080"}},
		{"a tab", "log:\n\tlevel: info\n",
			[]string{"c.yaml:2: a tab character indents this line: YAML indents with spaces only; replace the tab with spaces"}},
		{"every tab", "web:\n  listen: 127.0.0.1:8080\n\tchannels: [ops]\nlog:\n\tlevel: info\n", []string{
			"c.yaml:3: a tab character indents this line: YAML indents with spaces only; replace the tab with spaces",
			"c.yaml:5: a tab character indents this line: YAML indents with spaces only; replace the tab with spaces"}},
		{"indented too far", "web:\n  listen: 127.0.0.1:8080\n   channels: [ops]\n",
			[]string{`c.yaml:3: this line is indented more (3 spaces) than the line above, which already has its value: indent it like "listen:" above (2 spaces)`}},
		{"indented between two keys", "web:\n  listen: 127.0.0.1:8080\n channels: [ops]\n",
			[]string{`c.yaml:3: this line is indented by 1 space, like no key above it: indent it like "listen:" above (2 spaces), or like "web:" above (0 spaces)`}},
		{"mis-indented in a list item", "ssh:\n  known_hosts: /k\nhosts:\n  - name: a\n    address: b\n   groups: [x]\nexec:\n  timeout: 5s\n",
			[]string{`c.yaml:6: this line is indented by 3 spaces, like no key above it: indent it like "address:" above (4 spaces), or like the '- ' item above (2 spaces)`}},
		{"a key twice", "web:\n  listen: 127.0.0.1:8080\nweb:\n  listen: 127.0.0.1:9090\n",
			[]string{"c.yaml:3: web: this key is also at line 1: a key may appear once in its section; merge the two"}},
		{"not sections", "hello\n",
			[]string{"c.yaml:1: expected sections of keys (log:, store:, web:, hosts: ...), each on a line of its own; see deploy/opsbot.example.yaml"}},
		{"a decode error hides nothing", "exec:\n  timeout: 60\n  concurrency: lots\nlog:\n  levle: x\n  format: xml\nhosts:\n  - name: a\n    address: 10.0.0.1:22\n", []string{
			"c.yaml:2: exec.timeout: " + duration + ", not 60",
			`c.yaml:3: exec.concurrency: expected a whole number, not "lots"`,
			`c.yaml:5: log.levle: unknown key (did you mean "level"?); the keys here are: format, level`,
			"c.yaml:6: log.format: \"xml\" is not a log format: use auto, text or json",
			"c.yaml: ssh.known_hosts: is required when SSH hosts are configured: the OpenSSH known_hosts file that verifies their keys"}},
		{"a tab hides no bad value", "exec:\n  timeout: 60\nlog:\n\tlevel: info\nweb:\n  listen: 127.0.0.1:18934\n   api_key: x\n", []string{
			"c.yaml:2: exec.timeout: " + duration + ", not 60",
			"c.yaml:4: a tab character indents this line: YAML indents with spaces only; replace the tab with spaces",
			`c.yaml:7: this line is indented more (3 spaces) than the line above, which already has its value: indent it like "listen:" above (2 spaces)`}},
		{"a mis-indent hides no unknown key", "web:\n  listen: 127.0.0.1:8080\n   channels: [ops]\nlog:\n  levle: x\n", []string{
			`c.yaml:3: this line is indented more (3 spaces) than the line above, which already has its value: indent it like "listen:" above (2 spaces)`,
			`c.yaml:5: log.levle: unknown key (did you mean "level"?); the keys here are: format, level`}},
		{"a bad value is reported once", "hosts:\n  - name: [a]\n    address: 10.0.0.1:22\nssh:\n  known_hosts: /k\n",
			[]string{"c.yaml:2: hosts[0].name: expected a single value, not a list"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := parseConfig("c.yaml", []byte(c.yaml), env(nil))
			var got []string
			for _, e := range flatten(err) {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

// bot.thread_replies takes addressed or mentions; config check says so in
// words, at the key's line.
func TestThreadRepliesChecked(t *testing.T) {
	t.Parallel()
	env := func(string) (string, bool) { return "", false }
	if _, err := parseConfig("c.yaml", []byte("bot:\n  thread_replies: mentions\n"), env); err != nil {
		t.Errorf("thread_replies: mentions: %v", err)
	}
	_, err := parseConfig("c.yaml", []byte("bot:\n  thread_replies: always\n"), env)
	want := `c.yaml:2: bot.thread_replies: "always" is not a choice: use addressed (a message in a thread with the bot is for it unless it mentions someone else) or mentions (only messages that mention the bot)`
	if err == nil || err.Error() != want {
		t.Errorf("bad thread_replies: %v\nwant %s", err, want)
	}
}
