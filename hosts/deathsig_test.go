//go:build linux

package hosts_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/sshtest"
)

// blockedTracker is a ledger whose write never ends: the process is
// killed between a command's start and its record.
type blockedTracker struct{}

func (blockedTracker) Started(_ context.Context, p hosts.Process) (func(), error) {
	fmt.Printf("started %d\n", p.PID)
	select {}
}

// TestHelperRunsAnUnrecordedCommand is the process killed by
// TestKilledRunnerTakesItsUnrecordedCommandAlong; run alone it does
// nothing.
func TestHelperRunsAnUnrecordedCommand(t *testing.T) {
	command := os.Getenv("OPSBOT_UNRECORDED_COMMAND")
	if command == "" {
		return
	}
	l := &hosts.Local{Tracker: blockedTracker{}}
	l.Run(context.Background(), hosts.Host{Name: hosts.LocalHost}, command, hosts.Options{Timeout: time.Hour}, nil)
}

// A command whose runner dies after starting it and before recording it —
// so the start-up sweep never learns of it — dies with the runner: the
// kernel kills its leader (Pdeathsig). Before, it ran on, an orphan no
// record named.
func TestKilledRunnerTakesItsUnrecordedCommandAlong(t *testing.T) {
	t.Parallel()
	sleep := uniqueSleep()
	helper := exec.Command(os.Args[0], "-test.run=^TestHelperRunsAnUnrecordedCommand$")
	helper.Env = append(os.Environ(), "OPSBOT_UNRECORDED_COMMAND="+sleep)
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "started ") {
		t.Fatalf("the helper said %q (%v)", line, err)
	}
	// The leader by its pid, not by its command line: that reads empty
	// while the shell execs the sleep, and a scan then finds nothing.
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "started ")))
	if err != nil {
		t.Fatalf("the helper said %q", line)
	}
	leader, err := sshtest.Hold(pid)
	if err != nil {
		t.Fatalf("the command's leader %d: %v", pid, err)
	}
	procs := []*sshtest.Proc{leader}
	helper.Process.Kill()
	helper.Wait()
	for _, p := range procs {
		if !p.Wait(2 * time.Minute) { // a guard against a hang, not a speed
			t.Errorf("process %d (%s) runs on after its runner was killed, unrecorded", p.Pid, sleep)
		}
		p.Close()
	}
	waitGone(t, sleep) // the rest of the group, killed with the leader
}
