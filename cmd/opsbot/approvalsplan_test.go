package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/approvals"
)

// `opsbot approvals list` shows a pending plan as its goal, its number of
// steps and its targets, not as its canonical text.
func TestApprovalsListShowsAPlanByItsGoal(t *testing.T) {
	t.Parallel()
	p := approvals.Plan{Goal: "free the disk", Steps: []approvals.PlanStep{{Target: "web-1", Command: "systemctl stop app"},
		{Target: "web-1", Command: "rm -f /var/log/app/old.log"}}}
	now := time.Now()
	a := approvals.Approval{ID: "0123456789", Host: "web-1", Command: p.Canonical(), Requester: "web:alice", Platform: "web",
		Channel: "ops", Quorum: 1, ExpiresAt: now.Add(time.Hour)}
	var b bytes.Buffer
	printApproval(&b, a, nil, "@bob", now)
	if out := b.String(); !strings.HasPrefix(out, "01234567  web-1: plan: free the disk (2 steps on web-1)\n") || strings.Contains(out, "opsbot plan v1") {
		t.Errorf("approvals list prints:\n%s", out)
	}
}
