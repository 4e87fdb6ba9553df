package agent

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

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

// A turn over a metered provider: two model calls that end well (their
// usage summed), then one whose stream fails, then one cancelled.
func TestMetricsCountModelRequestsByResultWithTokens(t *testing.T) {
	t.Parallel()
	m, reg := newTestMetrics(t)
	failed := func(_ context.Context, _ Request, yield func(StreamEvent) bool) {
		yield(StreamEvent{Kind: EventText, Text: "par"})
		yield(StreamEvent{Kind: EventError, Err: errors.New("overloaded_error")})
	}
	p := m.Provider("anthropic", &scripted{steps: append([]func(context.Context, Request, func(StreamEvent) bool){
		say("a", "b"), say("c")}, failed)})
	for range 3 {
		for range p.Stream(context.Background(), Request{}) {
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range p.Stream(ctx, Request{}) {
	}
	want := `
# HELP opsbot_model_requests_total Model calls, by provider and result (ok, error, cancelled).
# TYPE opsbot_model_requests_total counter
opsbot_model_requests_total{provider="anthropic",result="cancelled"} 1
opsbot_model_requests_total{provider="anthropic",result="error"} 1
opsbot_model_requests_total{provider="anthropic",result="ok"} 2
# HELP opsbot_model_tokens_total Tokens the provider reported, by provider and direction (in: prompt, out: completion).
# TYPE opsbot_model_tokens_total counter
opsbot_model_tokens_total{direction="in",provider="anthropic"} 20
opsbot_model_tokens_total{direction="out",provider="anthropic"} 10
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "opsbot_model_requests_total", "opsbot_model_tokens_total"); err != nil {
		t.Error(err)
	}
	if n := histogramCount(t, reg, "opsbot_model_request_duration_seconds"); n != 4 {
		t.Errorf("model latency observations = %d, want 4", n)
	}
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
	if n := histogramCount(t, reg, "opsbot_command_duration_seconds"); n != 3 {
		t.Errorf("command durations observed = %d, want 3 (the commands that ran)", n)
	}
}

func TestNilMetricsChangeNothing(t *testing.T) {
	t.Parallel()
	var m *Metrics
	p := &scripted{}
	if m.Provider("x", p) != Provider(p) {
		t.Error("nil metrics wrapped the provider")
	}
	e := &shellExec{}
	if m.Executor(e) != hosts.Executor(e) {
		t.Error("nil metrics wrapped the executor")
	}
	m.Refused(policy.Deny, "refused") // no panic
}

// histogramCount sums the sample counts of every series of a histogram.
func histogramCount(t *testing.T, reg *prometheus.Registry, name string) uint64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, s := range mf.GetMetric() {
				n += s.GetHistogram().GetSampleCount()
			}
		}
	}
	return n
}
