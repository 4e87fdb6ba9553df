package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/connectors/web/testutil"
)

// Who may approve in the web chat, by config: the "anyone on this machine"
// rule applies whenever only this machine can reach the chat and no web
// approver is named, config file or not.
func TestWebGateConfig(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		yaml   string // "" : the embedded default
		want   []string
		anyone bool
	}{
		{"embedded default", "", []string{"*"}, true},
		{"loopback config without approvers", "web:\n  listen: 127.0.0.1:18080\n", []string{"*"}, true},
		{"localhost", "web:\n  listen: localhost:18080\n", []string{"*"}, true},
		{"ipv6 loopback", "web:\n  listen: '[::1]:18080'\n", []string{"*"}, true},
		{"slack approvers only", "approvals:\n  approvers:\n    - slack:\n        users: [U1]\n", []string{"*"}, true},
		{"web approvers named", "approvals:\n  approvers:\n    - web:\n        users: [alice]\n", []string{"alice"}, false},
		{"api key set", "web:\n  listen: 127.0.0.1:18080\n  api_key: k-0123456789abcdef\n", nil, false},
		{"open listener", "web:\n  listen: 0.0.0.0:18080\n  api_key: k-0123456789abcdef\n", nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg := defaultConfig()
			if c.yaml != "" {
				var err error
				if cfg, err = parseConfig("c.yaml", []byte(c.yaml), env(nil)); err != nil {
					t.Fatal(err)
				}
			}
			gate, anyone := webGateConfig(cfg)
			var web []string
			for _, a := range gate.Approvers {
				web = append(web, a.Web.Users...)
			}
			if !slices.Equal(web, c.want) || anyone != c.anyone {
				t.Errorf("web approvers %q (rule added: %v), want %q (%v)", web, anyone, c.want, c.anyone)
			}
		})
	}
}

// A valid config that leaves nobody able to approve in the web chat is
// warned about, naming the key to add.
func TestApprovalWarnings(t *testing.T) {
	t.Parallel()
	const addWeb = "nobody can approve a command asked for in the web chat (%s, and no approver names a web user), " +
		"so every request there expires unanswered: add an entry with web.users, e.g.\n" +
		"    approvals:\n      approvers:\n        - web:\n            users: [alice, bob]"
	cases := []struct {
		name string
		yaml string
		want []string
	}{
		{"loopback without approvers", "web:\n  listen: 127.0.0.1:18080\n", nil},
		{"open listener without approvers", "web:\n  listen: 0.0.0.0:18080\n  api_key: k-0123456789abcdef\n",
			[]string{"c.yaml: approvals.approvers: warning: " + strings.Replace(addWeb, "%s", "web.api_key is set, so the chat is open to other machines", 1)}},
		{"open listener, slack approvers only", "web:\n  listen: 0.0.0.0:18080\n  api_key: k-0123456789abcdef\napprovals:\n  approvers:\n    - slack:\n        users: [U1]\n",
			[]string{"c.yaml:5: approvals.approvers: warning: " + strings.Replace(addWeb, "%s", "web.api_key is set, so the chat is open to other machines", 1)}},
		{"open listener with web approvers", "web:\n  listen: 0.0.0.0:18080\n  api_key: k-0123456789abcdef\napprovals:\n  approvers:\n    - web:\n        users: [alice, bob]\n", nil},
		{"quorum above the approvers", "web:\n  listen: 0.0.0.0:18080\n  api_key: k-0123456789abcdef\napprovals:\n  quorum: 3\n  approvers:\n    - web:\n        users: [alice, bob]\n",
			[]string{"c.yaml:5: approvals.quorum: warning: 3 approvals are needed but the approvers name only 2 web user(s), " +
				"so no request made in the web chat can be approved: lower approvals.quorum or add users to approvals.approvers[].web.users"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := parseConfig("c.yaml", []byte(c.yaml), env(nil))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range cfg.approvalWarnings() {
				got = append(got, w.Error())
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("warnings:\n%q\nwant:\n%q", got, c.want)
			}
		})
	}
}

func TestConfigCheckWarnsWhenNobodyCanApprove(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(path, []byte("web:\n  listen: 0.0.0.0:18080\n  api_key: k-0123456789abcdef\n"), 0o600)
	code, out, stderr := runOpsbot(t, "config", "check", "--config", path)
	if code != 0 || !strings.Contains(out, "ok, with 1 warning(s)") ||
		!strings.Contains(stderr, "approvals.approvers: warning: nobody can approve") || !strings.Contains(stderr, "users: [alice, bob]") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 0 and a warning naming approvals.approvers", code, out, stderr)
	}
}

// The obvious config (a port on loopback, no approvers) keeps approvals
// working: bob approves alice's request and it runs; the log says why.
func TestBrowserLoopbackConfigWithoutApproversLetsAnotherPersonApprove(t *testing.T) {
	t.Parallel()
	url, logs := startBrowserBotWith(t, &fakeLLM{t: t}, "")
	if !strings.Contains(logs.String(), "anyone on the web chat may approve another person's request") {
		t.Errorf("the start-up log does not say who may approve:\n%s", logs)
	}
	browser := testutil.Browser(t)
	alice := testutil.Open(t, browser, url, "alice")
	target := filepath.Join(t.TempDir(), "approved")
	command := "touch " + target
	thread := alice.StartThread("@opsbot run local " + command)
	channel := openChannel(t, alice)
	isCard := func(m testutil.Message) bool { return m.Bot && pendingCard(m.Buttons) }
	ms := alice.WaitFor("the approval card", hasMessage(isCard))
	card, _ := findMessage(ms, isCard)

	bob := testutil.Open(t, testutil.NewUser(t, browser), url, "bob")
	bob.OpenThread(channel, thread)
	bob.Click(card.ID, "Approve")
	bob.WaitFor("the command's output", hasMessage(finishedRun(command)))
	if _, err := os.Stat(target); errors.Is(err, fs.ErrNotExist) {
		t.Errorf("bob approved and the command did not run")
	}
	if slices.ContainsFunc(bob.Notices(), func(n string) bool { return strings.Contains(n, "not an approver") }) {
		t.Errorf("bob was told he is not an approver: %q", bob.Notices())
	}
}

// Slack or Discord on with no approver there: every request made there
// would expire unanswered, and the warning says how to name one.
func TestChatApproverWarnings(t *testing.T) {
	t.Parallel()
	const chats = "slack:\n  bot_token: ${SLACK_BOT_TOKEN}\n  app_token: ${SLACK_APP_TOKEN}\ndiscord:\n  token: ${DISCORD_BOT_TOKEN}\n"
	vars := env(map[string]string{"SLACK_BOT_TOKEN": "xoxb-1-2-abc", "SLACK_APP_TOKEN": "xapp-1-A-1-abc", "DISCORD_BOT_TOKEN": "MTIz.abc.def"})
	cases := []struct {
		name, approvers string
		want            []string
	}{
		{"nobody on either", "", []string{"Slack is on, but no approver names a Slack user or user group", "Discord is on, but no approver names a Discord user or role"}},
		{"a Slack group only", "approvals:\n  approvers:\n    - slack:\n        user_groups: [S012ABCDEF]\n", []string{"Discord is on, but no approver"}},
		{"both", "approvals:\n  approvers:\n    - slack:\n        users: [U012ABCDEF]\n      discord:\n        roles: [\"123456789012345678\"]\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := parseConfig("c.yaml", []byte(chats+c.approvers), vars)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range cfg.approvalWarnings() {
				if !strings.Contains(w.Error(), "web chat") {
					got = append(got, w.Error())
				}
			}
			if len(got) != len(c.want) {
				t.Fatalf("warnings %q, want %d: %q", got, len(c.want), c.want)
			}
			for i, w := range c.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("warning %q lacks %q", got[i], w)
				}
			}
		})
	}
}
