package tools

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/testfake"
)

// A command's start tells the turn's caller its time limit — the model's
// timeout within the tool's cap, a minute when it asks none — so that the
// bot's task card asks its stream for that much life (render's TaskLimit).
func TestCommandStartCarriesItsTimeLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		input string
		want  time.Duration
	}{
		{`{"target":"web-1","command":"uptime","timeout":30}`, 30 * time.Second},
		{`{"target":"web-1","command":"uptime"}`, time.Minute},
		{`{"target":"web-1","command":"uptime","timeout":86400}`, 10 * time.Minute},
	} {
		synctest.Test(t, func(t *testing.T) {
			model := &testfake.Model{Steps: []testfake.Step{testfake.Calls("", "run_command", tc.input), testfake.Text("Done.")}}
			a := &agent.Agent{Provider: model, Tools: guarded(&clockExec{}, slowApprover{}), History: agent.NewMemoryHistory()}
			rec := &testfake.Recorder{}
			if err := a.Turn(context.Background(), agent.SessionInfo{ID: 1}, "check", rec.Emit); err != nil {
				t.Fatal(err)
			}
			started := rec.Kinds(agent.ToolStarted)
			if len(started) != 1 || started[0].Limit != tc.want {
				t.Errorf("%s: started %+v; want one start with limit %s", tc.input, started, tc.want)
			}
		})
	}
}
