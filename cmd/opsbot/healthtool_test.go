package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/tools"
	"github.com/opsbot/opsbot/checks"
	"github.com/opsbot/opsbot/store"
)

// The agent's health_results tool reads the last stored run of a
// schedule, failures included, without running anything.
func TestHealthResultsToolReadsTheStoredReport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{Path: filepath.Join(t.TempDir(), "h.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	at := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	if _, err := st.Checks().SaveCheckRun(ctx, checks.CheckRun{Schedule: "morning", StartedAt: at, EndedAt: at.Add(time.Second), Results: []checks.CheckResult{
		{Host: "web-1", Check: "disk", Status: "fail", Detail: "exit 1", Output: "/dev/sda1 97%"},
		{Host: "web-2", Check: "disk", OK: true, Status: "ok", Output: "/dev/sda1 40%"},
	}}); err != nil {
		t.Fatal(err)
	}
	tool := &tools.HealthResults{Reports: healthReports{store: st, schedules: []checks.Schedule{{Name: "morning", Checks: []string{"disk"}}, {Name: "never"}}}}
	res := tool.Call(ctx, agent.ToolCall{Name: "health_results", Input: []byte(`{}`)})
	for _, want := range []string{`<output schedule="morning">`, "1 failing", "web-1", "never: schedule never has not run yet"} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("result does not say %q:\n%s", want, res.Content)
		}
	}
}
