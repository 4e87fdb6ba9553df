package tools

import (
	"context"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/executor"
)

// A real command a Stop kills after it printed: the model reads what it
// printed and that it was stopped while running, never "could not run"
// (the Stop note said "ran … could not run" of a command that ran).
// A command that never started still says it could not run.
func TestStoppedCommandIsNotCalledUnrun(t *testing.T) {
	t.Parallel()
	fleet, err := hosts.NewFleet(hosts.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	ctx, stop := context.WithCancel(context.Background())
	printed := make(chan struct{})
	var once bool
	results := (&executor.Fleet{Fleet: fleet}).Exec(ctx, []string{hosts.LocalHost}, "echo started; exec sleep 600",
		hosts.ExecOptions{Confinement: hosts.Confinement{Approved: true}, OnOutput: func(_ string, _ bool, data []byte) {
			if !once && strings.Contains(string(data), "started") {
				once = true
				close(printed)
				stop() // the person presses Stop once it printed
			}
		}})
	<-printed
	if !results[0].Killed || results[0].Err == nil {
		t.Fatalf("the run was not killed by the cancel: %+v", results[0])
	}
	res := formatResults("sleep", results)
	if strings.Contains(res.Content, "could not run") || !strings.Contains(res.Content, "started\n") || !strings.Contains(res.Content, "so it may have partly run") {
		t.Errorf("the stopped command reads:\n%s", res.Content)
	}
	if r := runsOf("sleep", results)[0]; !r.Killed {
		t.Errorf("the run is not marked killed: %+v", r)
	}
	unrun := formatResults("sleep", []hosts.ExecResult{{Host: "web-9", ExitCode: -1, Err: context.Canceled}})
	if !strings.Contains(unrun.Content, "could not run") {
		t.Errorf("a command that never started reads:\n%s", unrun.Content)
	}
}
