package hosts_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/opsbot/opsbot/hosts"
)

// Nothing a sandboxed command starts outlives it: not a child in a new
// session (setsid), not one that ignores hang-ups (nohup), not a double
// fork — gone when Run returns, with or without the mount namespace.
func TestSandboxLeavesNothingRunning(t *testing.T) {
	t.Parallel()
	if !haveSandbox(t) {
		return
	}
	for _, ns := range []bool{true, false} {
		l := &hosts.Local{}
		if !ns {
			hosts.SetSandboxIsolation(l, func() error { return errors.New("no namespaces here") })
		}
		marks := []string{uniqueSleep(), uniqueSleep(), uniqueSleep()}
		cmd := fmt.Sprintf("setsid %s & nohup %s >/dev/null 2>&1 & (%s &) ; echo started", marks[0], marks[1], marks[2])
		res, err := sandboxed(t, l, cmd, hosts.Sandbox{})
		if err != nil || res.ExitCode != 0 || string(res.Output) != "started\n" {
			t.Fatalf("namespace %v: %v, exit %d, output %q", ns, err, res.ExitCode, res.Output)
		}
		for _, m := range marks {
			if procs := find(t, m); len(procs) > 0 {
				t.Errorf("namespace %v: %q still runs after the command returned (pid %d)", ns, m, procs[0].Pid)
			}
		}
	}
}

// On cancel (or the deadline) too: the launcher kills the command and
// what it left in another session, which the process group kill misses.
func TestSandboxCancelLeavesNothingRunning(t *testing.T) {
	t.Parallel()
	if !haveSandbox(t) {
		return
	}
	left, sleep := uniqueSleep(), uniqueSleep()
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	run := startSleep(t, sleep, func(cmd string, onChunk func(hosts.Chunk)) error {
		_, err := (&hosts.Local{}).Run(ctx, localHost, "setsid "+left+" & "+cmd, hosts.Options{Sandbox: &hosts.Sandbox{}}, onChunk)
		return err
	})
	procs := findRunning(t, left)
	cancel()
	if err := run.wait(); !errors.Is(err, context.Canceled) {
		t.Errorf("Run error %v, want context.Canceled", err)
	}
	if !allExited(procs) {
		t.Errorf("%q, started in its own session, outlived the cancelled command", left)
	}
}
