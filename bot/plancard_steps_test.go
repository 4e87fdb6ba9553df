package bot

import (
	"regexp"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/policy"
)

// A plan card's steps are headed "Step N", not a markdown list: each is
// followed by a code block, which ends a list, so a browser numbered
// every step "1." (a new user's screenshot).
func TestPlanCardNumbersStepsOutsideAList(t *testing.T) {
	t.Parallel()
	p := approvals.Plan{Goal: "three", Steps: []approvals.PlanStep{
		{Target: "local", Command: "touch /tmp/a"}, {Target: "local", Command: "ls /tmp"}, {Target: "local", Command: "rm /tmp/a"}}}
	vs := make([]approvals.StepVerdict, len(p.Steps))
	for i := range vs {
		vs[i].Decision = approvals.HostDecision{Action: policy.Approve}
	}
	text := planCard(approvals.Approval{Requester: "web:alice"}, p, vs, "anyone").Text
	if regexp.MustCompile(`(?m)^\d+\. `).MatchString(text) {
		t.Errorf("the card has markdown list items, which code blocks break:\n%s", text)
	}
	for _, want := range []string{"**Step 1** on `local`", "**Step 2** on `local`", "**Step 3** on `local`"} {
		if !strings.Contains(text, want) {
			t.Errorf("the card lacks %q:\n%s", want, text)
		}
	}
}
