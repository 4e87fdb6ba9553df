package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// containerConfig is the config the image carries (deploy/Dockerfile
// copies it to /etc/opsbot/opsbot.yaml), parsed with the environment vars.
func containerConfig(t *testing.T, vars map[string]string) *Config {
	t.Helper()
	path := filepath.Join("..", "..", "deploy", "opsbot.container.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := parseConfig(path, data, env(vars))
	if err != nil {
		t.Fatalf("the image's config with %v: %v", vars, err)
	}
	return cfg
}

const containerWebKey = "0123456789abcdef0123456789abcdef"

// TestContainerConfigTurnsConnectorsOnFromEnv: the image's config turns
// Slack on when its tokens are in the environment and Discord when its
// token is, leaves each off otherwise, and the web chat is always on.
func TestContainerConfigTurnsConnectorsOnFromEnv(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name           string
		vars           map[string]string
		slack, discord bool
	}{
		{"web only", map[string]string{}, false, false},
		{"slack", map[string]string{"SLACK_BOT_TOKEN": "xoxb-1-abc", "SLACK_APP_TOKEN": "xapp-1-abc"}, true, false},
		{"discord", map[string]string{"DISCORD_BOT_TOKEN": "MTIz.abc.def"}, false, true},
		{"both", map[string]string{"SLACK_BOT_TOKEN": "xoxb-1-abc", "SLACK_APP_TOKEN": "xapp-1-abc", "DISCORD_BOT_TOKEN": "MTIz.abc.def"}, true, true},
		{"empty tokens", map[string]string{"SLACK_BOT_TOKEN": "", "SLACK_APP_TOKEN": "", "DISCORD_BOT_TOKEN": ""}, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.vars["OPSBOT_WEB_API_KEY"] = containerWebKey
			cfg := containerConfig(t, c.vars)
			if cfg.Slack.Enabled() != c.slack || cfg.Discord.Enabled() != c.discord {
				t.Errorf("slack on %v, discord on %v; want %v, %v", cfg.Slack.Enabled(), cfg.Discord.Enabled(), c.slack, c.discord)
			}
			if c.slack && (cfg.Slack.BotToken != c.vars["SLACK_BOT_TOKEN"] || cfg.Slack.AppToken != c.vars["SLACK_APP_TOKEN"]) {
				t.Errorf("slack tokens %q, %q: not the environment's", cfg.Slack.BotToken, cfg.Slack.AppToken)
			}
			if c.discord && cfg.Discord.Token != c.vars["DISCORD_BOT_TOKEN"] {
				t.Errorf("discord token %q: not the environment's", cfg.Discord.Token)
			}
			for _, w := range cfg.warnings() {
				if strings.Contains(w.Msg, "stays off") {
					t.Errorf("a warning about a connector left off: %v", w)
				}
			}
		})
	}
}

// TestContainerConfigNeedsBothSlackTokens: the app token without the bot
// token is refused, naming what is missing, rather than leaving Slack off
// without a word.
func TestContainerConfigNeedsBothSlackTokens(t *testing.T) {
	t.Parallel()
	path := filepath.Join("..", "..", "deploy", "opsbot.container.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, vars := range []map[string]string{
		{"OPSBOT_WEB_API_KEY": containerWebKey, "SLACK_APP_TOKEN": "xapp-1-abc"},
		{"OPSBOT_WEB_API_KEY": containerWebKey, "SLACK_BOT_TOKEN": "xoxb-1-abc"},
	} {
		_, err := parseConfig(path, data, env(vars))
		if err == nil || !strings.Contains(err.Error(), "is missing") {
			t.Errorf("with %v: %v, want the missing token named", vars, err)
		}
	}
}

// TestTokenForAConnectorLeftOffWarns: a token in the environment that the
// config does not read leaves its connector off, and config check and the
// start log say so, naming the variable and the keys to write.
func TestTokenForAConnectorLeftOffWarns(t *testing.T) {
	t.Parallel()
	yaml := "web:\n  listen: 0.0.0.0:8080\n  api_key: ${OPSBOT_WEB_API_KEY}\napprovals:\n  approvers:\n    - web:\n        users: [alice]\n"
	cases := []struct {
		name string
		vars map[string]string
		want []string // substrings of the one warning; none: no warning
	}{
		{"slack", map[string]string{"SLACK_BOT_TOKEN": "xoxb-1-abc", "SLACK_APP_TOKEN": "xapp-1-abc"},
			[]string{"SLACK_BOT_TOKEN and SLACK_APP_TOKEN are set in the environment, but Slack stays off", "the config sets no slack.bot_token",
				"bot_token: ${SLACK_BOT_TOKEN}", "app_token: ${SLACK_APP_TOKEN}"}},
		{"discord", map[string]string{"DISCORD_BOT_TOKEN": "MTIz.abc.def"},
			[]string{"DISCORD_BOT_TOKEN is set in the environment, but Discord stays off", "token: ${DISCORD_BOT_TOKEN}"}},
		{"none", map[string]string{}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.vars["OPSBOT_WEB_API_KEY"] = containerWebKey
			cfg, err := parseConfig("own.yaml", []byte(yaml), env(c.vars))
			if err != nil {
				t.Fatal(err)
			}
			w := cfg.warnings()
			if len(c.want) == 0 {
				if len(w) != 0 {
					t.Errorf("warnings %v, want none", w)
				}
				return
			}
			if len(w) != 1 {
				t.Fatalf("warnings %v, want one", w)
			}
			for _, s := range c.want {
				if !strings.Contains(w[0].Error(), s) {
					t.Errorf("warning %q does not say %q", w[0], s)
				}
			}
		})
	}
}

// TestEmbeddedDefaultWarnsOfATokenItIgnores: `make run` (the embedded
// default, no slack section) with SLACK_BOT_TOKEN exported says Slack
// stays off and that a config file is needed.
func TestEmbeddedDefaultWarnsOfATokenItIgnores(t *testing.T) {
	cfg := defaultConfig()
	cfg.env = env(map[string]string{"SLACK_BOT_TOKEN": "xoxb-1-abc"})
	w := cfg.tokenEnvWarnings()
	if len(w) != 1 || !strings.Contains(w[0].Msg, "the embedded default has no slack.bot_token (give a config file with --config)") {
		t.Fatalf("warnings %v, want one saying the embedded default leaves Slack off", w)
	}
}

// The start log warns of a token set for a connector that stays off, as
// config check does: the run scrubs the tokens from its environment
// before it logs the config's warnings, which must not lose this one.
func TestStartLogWarnsOfATokenForAConnectorLeftOff(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "opsbot.yaml")
	yaml := fmt.Sprintf("web:\n  listen: 127.0.0.1:0\nstore:\n  path: %q\n", filepath.Join(dir, "opsbot.db"))
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := opsbot(t, dir, "run", "--config", cfg)
	cmd.Env = append(cmd.Env, "SLACK_BOT_TOKEN=xoxb-1-2-abc", "SLACK_APP_TOKEN=xapp-1-A-1-abc")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var logged []string
	lines := bufio.NewScanner(stderr)
	for lines.Scan() && !strings.Contains(lines.Text(), `"listen":"http://`) {
		logged = append(logged, lines.Text())
	}
	go io.Copy(io.Discard, stderr)
	if log := strings.Join(logged, "\n"); !strings.Contains(log, "SLACK_BOT_TOKEN and SLACK_APP_TOKEN are set in the environment, but Slack stays off") {
		t.Errorf("the start log does not warn that Slack stays off:\n%s", log)
	}
}

// --data-dir replaces store.path and bot.data_dir, so the folders the
// file names need not exist: the image's own config (its /data) runs
// outside a container with --data-dir.
func TestDataDirStandsInForTheFilesFolders(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	config, _ := filepath.Abs(filepath.Join("..", "..", "deploy", "opsbot.container.yaml"))
	cmd := opsbot(t, dir, "run", "--config", config, "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0")
	cmd.Env = append(cmd.Env, "OPSBOT_WEB_API_KEY="+containerWebKey, "SLACK_BOT_TOKEN=", "SLACK_APP_TOKEN=", "DISCORD_BOT_TOKEN=")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitForListen(t, stderr)
	if _, err := os.Stat(filepath.Join(dir, "data", "opsbot.db")); err != nil {
		t.Errorf("the database is not in --data-dir: %v", err)
	}
}
