package main

import (
	"errors"
	"os"
	"path/filepath"
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
			[]string{"bad.yaml:2:", "store.busy_timeout", "time.Duration"}},
		{"wrong type int", "agent:\n  max_steps: many\n", nil,
			[]string{"bad.yaml:2:", "agent.max_steps", "int"}},
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
	for _, key := range allKeys(Config{}) {
		if _, ok := cfg.lines[key]; !ok {
			t.Errorf("deploy/opsbot.example.yaml does not document %s", key)
		}
	}
}

func TestConfigFileErrors(t *testing.T) {
	t.Parallel()
	_, err := loadConfig(filepath.Join(t.TempDir(), "missing.yaml"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}
