package tools

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/opsbot/opsbot/agent"
)

//go:embed health_results.md
var healthResultsDescription string

// HealthReports reads the latest results of the scheduled health checks,
// as stored (checks.LatestReport): the agent reads them, never re-runs.
type HealthReports interface {
	// Schedules are the schedules' names.
	Schedules() []string
	// Latest is a schedule's last report as text, failures first.
	Latest(ctx context.Context, schedule string) (string, error)
}

// HealthResults is `health_results`.
type HealthResults struct{ Reports HealthReports }

var _ agent.Tool = (*HealthResults)(nil)

// Spec describes the tool.
func (*HealthResults) Spec() agent.ToolSpec {
	return spec("health_results", healthResultsDescription,
		`{"type":"object","properties":{"schedule":{"type":"string","description":"a schedule's name; empty for all"}}}`)
}

// Call reads one schedule's report, or every schedule's.
func (t *HealthResults) Call(ctx context.Context, call agent.ToolCall) agent.ToolResult {
	var in struct {
		Schedule string `json:"schedule"`
	}
	if err := decodeInput(call, &in); err != nil {
		return agent.Errorf("%v", err)
	}
	names := t.Reports.Schedules()
	if in.Schedule != "" {
		names = []string{in.Schedule}
	}
	if len(names) == 0 {
		return agent.Errorf("no health checks are scheduled (checks.schedules in the config)")
	}
	var b strings.Builder
	for _, n := range names {
		text, err := t.Reports.Latest(ctx, n)
		if err != nil {
			fmt.Fprintf(&b, "%s: %v\n\n", n, err)
			continue
		}
		fmt.Fprintf(&b, "<output schedule=%q>\n%s\n</output>\n\n", n, unframe(text))
	}
	return agent.ToolResult{Content: b.String(), Summary: fmt.Sprintf("health results of %d schedule(s)", len(names))}
}

// Concurrent is true: the tool only reads, and asks no one.
func (*HealthResults) Concurrent(agent.ToolCall) bool { return true }
