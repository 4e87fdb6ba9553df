package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/policy"
)

// The prompt's policy paragraph says what the configured policy does:
// no more "destructive commands are denied outright" when rm -rf DIR in
// fact waits for approval.
func TestPolicyPromptFollowsTheConfig(t *testing.T) {
	t.Parallel()
	got := policyPrompt(policy.PolicyConfig{
		Allow:       []string{"pg_isready"},
		SecretPaths: []string{"/srv/app/secrets.env"},
		EgressAllow: []string{"api.github.com"},
		Rules:       []policy.RuleConfig{{Program: "systemctl", Args: []string{"restart", "nginx"}, Groups: []string{"web"}, Action: "allow", Reason: "safe to bounce"}},
	}, approvals.GateConfig{Quorum: 2, Expiry: 30 * time.Minute, Approvers: []approvals.ApproverConfig{
		{Slack: approvals.SlackApprovers{UserGroups: []string{"S0SRE"}}, HostGroups: []string{"db"}},
	}})
	for _, want := range []string{
		"Also runs at once, with any arguments: pg_isready.",
		"Rule: `systemctl restart nginx` on group web: runs at once (safe to bounce).",
		"Anything else: waits for a person to approve it.",
		"rm -r of / or of a top-level directory",
		"2 approvals needed, from slack S0SRE for group db",
		"within 30m0s is denied",
		"Reading a secret file waits for approval, whatever the program: /srv/app/secrets.env, /etc/shadow",
		"only towards the inventory's hosts and api.github.com; any other destination waits for approval",
		"runs confined, on the bot's host and on SSH hosts alike",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the policy paragraph does not say %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "destructive commands are denied outright") {
		t.Error("the old, false sentence is still there")
	}
}

// The prompt's approvers are those the gate in force lets vote: for each
// config, a person the prompt names as an approver may approve, and the
// prompt says nobody may only when nobody can.
func TestPolicyPromptNamesTheApproversInForce(t *testing.T) {
	t.Parallel()
	bob := approvals.Person{Platform: "web", ID: "bob"}
	oncall := approvals.Person{Platform: "slack", ID: "U0BOB", Groups: []string{"S0SRE"}}
	tests := []struct {
		name     string
		yaml     string
		mayVote  []approvals.Person
		mayNot   []approvals.Person
		promptIs []string
	}{
		{"the embedded default: loopback web chat, no approvers named", "web:\n  listen: 127.0.0.1:8080\n",
			[]approvals.Person{bob}, []approvals.Person{oncall}, []string{"from anyone on the web chat"}},
		{"a web chat behind a key, no approvers named", "web:\n  listen: 0.0.0.0:8080\n  api_key: a-long-enough-web-key-1234\n",
			nil, []approvals.Person{bob, oncall}, []string{"Nobody is configured to approve"}},
		{"a Slack user group", "web:\n  listen: 0.0.0.0:8080\n  api_key: a-long-enough-web-key-1234\napprovals:\n  approvers:\n    - slack:\n        user_groups: [S0SRE]\n",
			[]approvals.Person{oncall}, []approvals.Person{bob}, []string{"from slack S0SRE"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			noEnv := func(string) (string, bool) { return "", false }
			cfg, err := parseConfig("opsbot.yaml", []byte(tt.yaml), noEnv)
			if err != nil {
				t.Fatal(err)
			}
			inForce, _ := webGateConfig(cfg)
			prompt := policyPrompt(cfg.Policy, inForce)
			gate := approvals.NewGate(nil, inForce, approvals.GateOptions{})
			req := approvals.Approval{Channel: "ops", Host: "local"}
			for _, p := range tt.mayVote {
				if !gate.MayApprove(req, p) {
					t.Errorf("%s may not approve, but the case says they may", p.Key())
				}
			}
			for _, p := range tt.mayNot {
				if gate.MayApprove(req, p) {
					t.Errorf("%s may approve, but the case says they may not", p.Key())
				}
			}
			for _, w := range tt.promptIs {
				if !strings.Contains(prompt, w) {
					t.Errorf("the prompt does not say %q:\n%s", w, prompt)
				}
			}
			if says := strings.Contains(prompt, "Nobody is configured"); says != (len(tt.mayVote) == 0) {
				t.Errorf("the prompt says nobody approves: %v; people who may: %v\n%s", says, tt.mayVote, prompt)
			}
		})
	}
}

// The running bot's system prompt names the approvers in force: with the
// embedded default's loopback web chat and no approvers named, anyone on
// the chat may approve, and the model is told so.
func TestRunningBotsPromptNamesTheApproversInForce(t *testing.T) {
	t.Parallel()
	llm := &fakeLLM{t: t, say: []string{"all fine"}}
	base, _ := startBrowserBotWith(t, llm, "")
	thread := postMessage(t, base, "@opsbot how is the disk?")
	awaitInThread(t, base, thread, "all fine")
	reqs := llm.allRequests()
	if len(reqs) == 0 || reqs[0].Messages[0].Role != "system" {
		t.Fatalf("no system prompt reached the model: %+v", reqs)
	}
	system := fmt.Sprint(reqs[0].Messages[0].Content)
	if strings.Contains(system, "Nobody is configured to approve") || !strings.Contains(system, "from anyone on the web chat") {
		t.Errorf("the system prompt does not name the approvers in force:\n%s", system)
	}
}
