package tools

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/opsbot/opsbot/agent/internal/testfake"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/policy"
)

func newTestMetrics(t *testing.T) (*Metrics, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	return m, reg
}

// The Guard's decisions, through a metered executor: an allowed command
// that succeeds and one that fails, an approved one, one people deny, one
// the policy denies.
func TestMetricsCountCommandsByDecisionAndResult(t *testing.T) {
	t.Parallel()
	m, reg := newTestMetrics(t)
	approver := &fakeApprover{answer: approvals.Outcome{Approved: true, State: "approved"}}
	g := &approvals.Guard{Policy: fakePolicy{"true": policy.Allow, "false": policy.Allow, "rm -rf /": policy.Deny}, Approver: approver,
		Exec: m.Executor(&shellExec{}), Refusals: m}
	runCommand(t, g, "local", "true")
	runCommand(t, g, "local", "false")
	runCommand(t, g, "local", "touch /dev/null")
	approver.answer = approvals.Outcome{State: "denied", DecidedBy: "bob"}
	runCommand(t, g, "local", "touch /dev/null")
	runCommand(t, g, "local", "rm -rf /")
	want := `
# HELP opsbot_commands_total Commands by the policy's decision (allow, approve, deny) and result (ok, failed, timeout, cancelled, error, refused, not_approved).
# TYPE opsbot_commands_total counter
opsbot_commands_total{decision="allow",result="failed"} 1
opsbot_commands_total{decision="allow",result="ok"} 1
opsbot_commands_total{decision="approve",result="not_approved"} 1
opsbot_commands_total{decision="approve",result="ok"} 1
opsbot_commands_total{decision="deny",result="refused"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "opsbot_commands_total"); err != nil {
		t.Error(err)
	}
	if n := testfake.HistogramCount(t, reg, "opsbot_command_duration_seconds"); n != 3 {
		t.Errorf("command durations observed = %d, want 3 (the commands that ran)", n)
	}
}

func TestNilMetricsChangeNothing(t *testing.T) {
	t.Parallel()
	var m *Metrics
	e := &shellExec{}
	if m.Executor(e) != hosts.Executor(e) {
		t.Error("nil metrics wrapped the executor")
	}
	m.Refused(policy.Deny, "refused") // no panic
}
