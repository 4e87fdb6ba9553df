package store

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/hosts"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// The collector reads the rows: three requests of which one waits (for
// 90 s on the store's clock) and two are decided; two jobs of which one
// runs and one failed. Closing the database shows it down, not an error
// that would fail every other metric of the scrape.
func TestCollectorCountsApprovalsAndJobsFromTheRows(t *testing.T) {
	t.Parallel()
	s, clock := openTest(t)
	ctx := context.Background()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(s.Collector())
	var ids []string
	for range 3 {
		a, err := s.Approvals().CreateApproval(ctx, approvals.Approval{Host: "local", Command: "touch x", Requester: "web:alice", Quorum: 1,
			ExpiresAt: clock.Now().Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.ID)
	}
	s.Approvals().DecideApproval(ctx, ids[0], approvals.ApprovalApproved, "web:bob")
	s.Approvals().DecideApproval(ctx, ids[1], approvals.ApprovalExpired, "opsbot")
	s.Jobs().CreateJob(ctx, hosts.Job{Host: "local", Command: "sleep 1", Requester: "web:alice"}) // still running
	failed, _ := s.Jobs().CreateJob(ctx, hosts.Job{Host: "local", Command: "false", Requester: "web:alice"})
	one := 1
	s.Jobs().FinishJob(ctx, failed.ID, hosts.JobFailed, &one, "", "failed")
	clock.Add(90 * time.Second)

	want := `
# HELP opsbot_approvals_oldest_pending_age_seconds How long the oldest pending approval request has waited; 0 when none waits.
# TYPE opsbot_approvals_oldest_pending_age_seconds gauge
opsbot_approvals_oldest_pending_age_seconds 90
# HELP opsbot_approvals_pending Approval requests waiting for a decision.
# TYPE opsbot_approvals_pending gauge
opsbot_approvals_pending 1
# HELP opsbot_approvals_total Approval requests decided, by final state (approved, denied, expired).
# TYPE opsbot_approvals_total counter
opsbot_approvals_total{state="approved"} 1
opsbot_approvals_total{state="denied"} 0
opsbot_approvals_total{state="expired"} 1
# HELP opsbot_database_up 1 when the database answered the scrape's queries, else 0.
# TYPE opsbot_database_up gauge
opsbot_database_up 1
# HELP opsbot_jobs_finished_total Background jobs ended, by state (succeeded, failed, cancelled, interrupted).
# TYPE opsbot_jobs_finished_total counter
opsbot_jobs_finished_total{state="cancelled"} 0
opsbot_jobs_finished_total{state="failed"} 1
opsbot_jobs_finished_total{state="interrupted"} 0
opsbot_jobs_finished_total{state="succeeded"} 0
# HELP opsbot_jobs_running Background jobs running.
# TYPE opsbot_jobs_running gauge
opsbot_jobs_running 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}

	s.read.Close()
	down := `
# HELP opsbot_database_up 1 when the database answered the scrape's queries, else 0.
# TYPE opsbot_database_up gauge
opsbot_database_up 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(down)); err != nil {
		t.Errorf("with the database closed: %v", err)
	}
}
