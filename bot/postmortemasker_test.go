package bot

import (
	"testing"
	"time"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/store"
)

// A plan's step runs as opsbot, but the postmortem says who asked for
// it: the plan's requester (a try-out saw "asked by opsbot").
func TestPostmortemPlanStepIsAskedByThePlansRequester(t *testing.T) {
	t.Parallel()
	plan := approvals.Plan{Goal: "fix", Steps: []approvals.PlanStep{{Target: "web-1", Command: "systemctl restart nginx"}}}.Canonical()
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	as := []store.ThreadApproval{
		{ApprovalID: "a1", AuditID: 1, At: at, Actor: "web:alice", Action: "approval.request", Host: "web-1", Command: plan},
		{ApprovalID: "a1", AuditID: 2, At: at.Add(time.Second), Actor: "web:bob", Action: "approval.approved", Host: "web-1", Command: plan},
	}
	cmds := []store.ThreadCommand{{MemoryHit: store.MemoryHit{AuditID: 3, At: at.Add(2 * time.Second), Host: "web-1", Text: "systemctl restart nginx", HasExit: true}, Actor: "opsbot"}}
	planApprovers(cmds, as)
	rows := commandRows(cmds)
	want := "- 12:00:02 on `web-1`: `systemctl restart nginx` — exit 0, asked by @alice, approved by @bob [audit row 3]"
	if rows[0] != want {
		t.Errorf("the step's line is\n%s\nwant\n%s", rows[0], want)
	}
}
