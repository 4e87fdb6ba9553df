package main

import (
	"strings"
	"testing"
)

// TestConfigCheckRefusesApproversByName: approver ids are checked by
// their platform's shape, and each refusal says where to find the id.
func TestConfigCheckRefusesApproversByName(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, approvers string
		want            []string // substrings of the error; none: accepted
	}{
		{"slack user by handle", "slack:\n        users: ['@alice']",
			[]string{"c.yaml:4:", "approvals.approvers[0].slack.users[0]", `"@alice" is not a Slack member id`, "Copy member ID"}},
		{"slack user by name", "slack:\n        users: [alice]", []string{`"alice" is not a Slack member id`}},
		{"slack group by handle", "slack:\n        user_groups: [sre]",
			[]string{"approvals.approvers[0].slack.user_groups[0]", `"sre" is not a Slack user group id`, "usergroups.list"}},
		{"discord role by name", "discord:\n        roles: [oncall]",
			[]string{"approvals.approvers[0].discord.roles[0]", `"oncall" is not a Discord id`, "Developer Mode", "Copy Role ID"}},
		{"discord user by name", "discord:\n        users: [alice]", []string{`"alice" is not a Discord id`, "Copy User ID"}},
		{"ids of every platform", "slack:\n        users: [U0123ABCD, W0123ABCD]\n        user_groups: [S0123ABCD]\n" +
			"      discord:\n        users: [\"123456789012345678\"]\n        roles: [\"12345678901234567890\"]\n      web:\n        users: [alice]", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			yaml := "approvals:\n  approvers:\n    - " + c.approvers + "\n"
			_, err := parseConfig("c.yaml", []byte(yaml), env(nil))
			if len(c.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not say %q", err, w)
				}
			}
		})
	}
}

// TestConfigCheckRefusesQuorumZero: quorum: 0 written out is refused (left
// out, it is 1).
func TestConfigCheckRefusesQuorumZero(t *testing.T) {
	t.Parallel()
	_, err := parseConfig("c.yaml", []byte("approvals:\n  quorum: 0\n"), env(nil))
	if err == nil || !strings.Contains(err.Error(), "c.yaml:2: approvals.quorum: must be 1 or more") {
		t.Errorf("quorum 0: %v, want it refused on its line", err)
	}
	if _, err := parseConfig("c.yaml", []byte("approvals:\n  expiry: 5m\n"), env(nil)); err != nil {
		t.Errorf("quorum left out: %v", err)
	}
}

// TestConfigCheckWarnsOfLiteralSecrets: a token or key written into the
// file draws a warning suggesting ${NAME}; the same value from the
// environment does not.
func TestConfigCheckWarnsOfLiteralSecrets(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, yaml, want string }{
		{"slack bot token", "slack:\n  bot_token: xoxb-1234-5678-abcdef\n  app_token: ${A}\n", "c.yaml:2: slack.bot_token: warning: this looks like a Slack bot token written into the file: put it in the environment and write ${NAME} here, e.g. ${SLACK_BOT_TOKEN}"},
		{"slack app token", "slack:\n  bot_token: ${B}\n  app_token: xapp-1-A1-abcdef\n", "slack.app_token: warning: this looks like a Slack app-level token"},
		{"slack user token", "agent:\n  tools:\n    extra: xoxp-123-456\n", "a Slack user token"},
		{"anthropic", "agent:\n  provider: anthropic\n  api_key: sk-ant-api03-abcdef\n", "agent.api_key: warning: this looks like an Anthropic API key"},
		{"openai", "agent:\n  provider: openai\n  api_key: sk-proj-abcdefghijklmnop1234\n", "this looks like an OpenAI API key"},
		{"discord", "discord:\n  token: MTIzNDU2Nzg5MDEyMzQ1Njc4OQ.GaBcDe.abcdefghijklmnopqrstuvwxyz012345\n", "discord.token: warning: this looks like a Discord bot token"},
	}
	vars := env(map[string]string{"A": "xapp-1-A1-abcdef", "B": "xoxb-1234-5678-abcdef"})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg, errs := decodeConfig("c.yaml", []byte(c.yaml), vars)
			if cfg == nil {
				t.Fatalf("not decoded: %v", errs)
			}
			var got []string
			for _, w := range cfg.warnings() {
				got = append(got, w.Error())
			}
			if !strings.Contains(strings.Join(got, "\n"), c.want) {
				t.Errorf("warnings %q, want one saying %q", got, c.want)
			}
		})
	}
	cfg, err := parseConfig("c.yaml", []byte("slack:\n  bot_token: ${B}\n  app_token: ${A}\n"), vars)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range cfg.warnings() {
		if strings.Contains(w.Msg, "looks like") {
			t.Errorf("a token from the environment is warned about: %v", w)
		}
	}
}

// TestConfigCheckRefusesWeakWebKeys: beyond loopback, a placeholder or a
// key under 16 characters is refused (env example's old change-me among
// them), without showing a real key; on loopback any key is accepted.
func TestConfigCheckRefusesWeakWebKeys(t *testing.T) {
	t.Parallel()
	cases := []struct {
		listen, key string
		want        []string // none: accepted
		not         string
	}{
		{"0.0.0.0:8080", "change-me", []string{"c.yaml:3: web.api_key:", `"change-me" is a placeholder`, "openssl rand -hex 24"}, ""},
		{"0.0.0.0:8080", "changeme", []string{"is a placeholder"}, ""},
		{"0.0.0.0:8080", "secret", []string{"is a placeholder"}, ""},
		{"10.0.0.5:8080", "short-k3y", []string{"is 9 characters, fewer than 16", "10.0.0.5:8080 can be reached"}, "short-k3y"},
		{"0.0.0.0:8080", "0123456789abcdef", nil, ""},
		{"127.0.0.1:8080", "change-me", nil, ""},
	}
	for _, c := range cases {
		t.Run(c.listen+" "+c.key, func(t *testing.T) {
			t.Parallel()
			yaml := "web:\n  listen: " + c.listen + "\n  api_key: ${KEY}\n"
			_, err := parseConfig("c.yaml", []byte(yaml), env(map[string]string{"KEY": c.key}))
			if len(c.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not say %q", err, w)
				}
			}
			if c.not != "" && strings.Contains(err.Error(), c.not) {
				t.Errorf("%q shows the key", err)
			}
		})
	}
}
