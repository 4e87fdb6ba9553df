package main

import (
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
		Allow: []string{"pg_isready"},
		Rules: []policy.RuleConfig{{Program: "systemctl", Args: []string{"restart", "nginx"}, Groups: []string{"web"}, Action: "allow", Reason: "safe to bounce"}},
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
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the policy paragraph does not say %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "destructive commands are denied outright") {
		t.Error("the old, false sentence is still there")
	}
}
