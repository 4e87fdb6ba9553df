package hosts_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/sshtest"
)

// tracker records what the runners report, and hands each Process to the
// test as it starts.
type tracker struct {
	mu      sync.Mutex
	started chan hosts.Process
	ended   []hosts.Process
}

func newTracker() *tracker { return &tracker{started: make(chan hosts.Process, 8)} }

func (tr *tracker) Started(_ context.Context, p hosts.Process) (func(), error) {
	tr.started <- p
	return func() {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		tr.ended = append(tr.ended, p)
	}, nil
}

// TestEndLocalEndsTheGroupOfARunningCommand: what the local runner
// records is enough to end the command's whole group (its shell, the
// pipeline and the sleep), as the start-up sweep does after a crash.
func TestEndLocalEndsTheGroupOfARunningCommand(t *testing.T) {
	t.Parallel()
	tr := newTracker()
	l := &hosts.Local{Tracker: tr}
	sleep := uniqueSleep()
	run := startSleep(t, sleep, func(cmd string, onChunk func(hosts.Chunk)) error {
		_, err := l.Run(bg, hosts.Host{Name: hosts.LocalHost}, cmd, hosts.Options{}, onChunk)
		return err
	})
	p := <-tr.started
	if p.Host != hosts.LocalHost || p.PID <= 1 || p.Start == 0 || p.Boot == "" {
		t.Fatalf("recorded %+v: want the group leader's pid, start time and boot id", p)
	}
	procs := findRunning(t, sleep)
	ended, err := hosts.EndLocal(p)
	if err != nil || !ended {
		t.Fatalf("EndLocal = %v, %v; want true", ended, err)
	}
	awaitExit(t, sleep, procs)
	_ = run.wait()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if len(tr.ended) != 1 {
		t.Errorf("the tracker heard of %d ends, want 1", len(tr.ended))
	}
}

// TestEndLocalEndsChildrenTheLeaderLeft: a command whose shell has exited
// may leave children in its group; they are ended too.
func TestEndLocalEndsChildrenTheLeaderLeft(t *testing.T) {
	t.Parallel()
	sleep := uniqueSleep()
	// The shell says "ready" once its child has become the sleep (its
	// cmdline reads so), so the search below never meets it mid-exec: a
	// search during the exec found nothing on a loaded machine.
	leader := exec.Command("bash", "-c", sleep+` & until tr '\0' ' ' < /proc/$!/cmdline | grep -q '^sleep '; do :; done; echo ready; read -r _`)
	leader.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := leader.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := leader.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := leader.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("the shell said %q, %v; want ready", line, err)
	}
	p := hosts.LocalProcess(leader.Process.Pid, sleep)
	stdin.Close() // the shell exits; its sleep stays in the group
	_ = leader.Wait()
	procs := findRunning(t, sleep)
	ended, err := hosts.EndLocal(p)
	if err != nil || !ended {
		t.Fatalf("EndLocal = %v, %v; want true", ended, err)
	}
	awaitExit(t, sleep, procs)
	if ended, _ := hosts.EndLocal(p); ended {
		t.Errorf("a second sweep found something left")
	}
}

// TestEndLocalNeverSignalsAReusedPid: a pid whose process started at
// another time, or in another boot, is not the command's.
func TestEndLocalNeverSignalsAReusedPid(t *testing.T) {
	t.Parallel()
	sleep := uniqueSleep()
	// The shell says "ready" from the process that then becomes the sleep,
	// so the search below never meets it in the middle of its exec.
	other := exec.Command("sh", "-c", "echo ready; exec "+sleep)
	other.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := other.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	if line, err := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		t.Fatalf("the command never said it was ready: %q, %v", line, err)
	}
	awaitExec(t, other.Process.Pid, sleep)
	// Held by its pid, known: a scan of /proc found nothing once under
	// load (its listing may come back short while processes come and go).
	held, err := sshtest.Hold(other.Process.Pid)
	if err != nil || held == nil {
		t.Fatalf("the sleep %d cannot be held: %v", other.Process.Pid, err)
	}
	t.Cleanup(func() { held.Close() })
	procs := []*sshtest.Proc{held}
	p := hosts.LocalProcess(other.Process.Pid, sleep)
	later, rebooted := p, p
	later.Start++
	rebooted.Boot = "another-boot"
	for _, q := range []hosts.Process{later, rebooted} {
		if ended, err := hosts.EndLocal(q); ended || err != nil {
			t.Errorf("EndLocal(%+v) = %v, %v; want false, nil", q, ended, err)
		}
	}
	if allExited(procs) {
		t.Errorf("a process that was not the command's was ended")
	}
}

// TestPoolEndEndsARemoteRunByItsToken: after a crash, a remote command
// outlives its SSH connection until its deadline; the sweep finds it by
// the token recorded before it started and ends its group.
func TestPoolEndEndsARemoteRunByItsToken(t *testing.T) {
	t.Parallel()
	p, h, _ := newPool(t, sshtest.Options{}, nil)
	tr := newTracker()
	p.Tracker = tr
	sleep := uniqueSleep()
	run := startSleep(t, sleep, poolRun(bg, p, h, hosts.Options{}))
	rec := <-tr.started
	if rec.Token == "" || rec.Host != h.Name {
		t.Fatalf("recorded %+v: want the host and the run's token", rec)
	}
	procs := findRunning(t, sleep)
	// The sweep runs after a restart, through a pool of its own; the
	// recorded run must not be taken for the sweep's own command.
	p.Tracker = nil
	ended, err := p.End(bg, h, rec)
	if err != nil || !ended {
		t.Fatalf("End = %v, %v; want true", ended, err)
	}
	awaitExit(t, sleep, procs)
	_ = run.wait()
	if ended, err := p.End(bg, h, rec); ended || err != nil {
		t.Errorf("a second sweep: %v, %v; want nothing left", ended, err)
	}
}

// TestSelfIsAlive: the record of this process says it runs; the same
// record with another start time does not.
func TestSelfIsAlive(t *testing.T) {
	t.Parallel()
	me := hosts.Self()
	if !hosts.Alive(me) {
		t.Fatalf("Alive(Self()) = false for %+v", me)
	}
	me.Start++
	if hosts.Alive(me) {
		t.Errorf("a record with another start time is alive")
	}
}

// refusingTracker cannot keep a command's record where it must be
// (hosts.ErrUnrecorded): the command must not go on.
type refusingTracker struct{ ended chan hosts.Process }

func (tr refusingTracker) Started(_ context.Context, p hosts.Process) (func(), error) {
	return func() { tr.ended <- p }, fmt.Errorf("replica down: %w", hosts.ErrUnrecorded)
}

// TestUnrecordedCommandDoesNotGoOn: a command whose record the tracker
// cannot keep does not run on a remote host (its record comes before
// its start) and is stopped at once locally (its record needs its
// process): each result says why, and the tracker still hears of its
// end. Before, the ledger let it run unrecorded, and a successor read
// its approval as never started.
func TestUnrecordedCommandDoesNotGoOn(t *testing.T) {
	t.Parallel()
	p, h, _ := newPool(t, sshtest.Options{}, nil)
	out := t.TempDir()
	tr := refusingTracker{ended: make(chan hosts.Process, 1)}
	p.Tracker = tr
	for _, c := range []struct {
		name string
		run  func(cmd string) error
	}{
		{"remote", func(cmd string) error {
			_, err := p.Run(bg, h, cmd, hosts.Options{}, nil)
			return err
		}},
		{"local", func(cmd string) error {
			_, err := (&hosts.Local{Tracker: tr}).Run(bg, hosts.Host{Name: hosts.LocalHost}, cmd, hosts.Options{}, nil)
			return err
		}},
	} {
		mark := filepath.Join(out, c.name)
		err := c.run("sleep 5; touch " + mark)
		if !errors.Is(err, hosts.ErrUnrecorded) {
			t.Errorf("%s: the run returned %v; want it refused for want of a record", c.name, err)
		}
		if _, serr := os.Stat(mark); serr == nil {
			t.Errorf("%s: the unrecorded command ran to its end", c.name)
		}
		select {
		case <-tr.ended:
		default:
			t.Errorf("%s: the tracker never heard the command ended", c.name)
		}
	}
}

// gatedTracker refuses before a local command starts (hosts.StartGate):
// what its record would depend on could not be made safe.
type gatedTracker struct{ refusingTracker }

func (gatedTracker) BeforeStart(context.Context) error {
	return fmt.Errorf("replica down: %w", hosts.ErrUnrecorded)
}

// TestLocalCommandWaitsForItsGate: a local command whose tracker's gate
// refuses never starts, however quick its effect. Before, a local command
// started first and was recorded after, so a quick effect happened even
// when its record was then refused.
func TestLocalCommandWaitsForItsGate(t *testing.T) {
	t.Parallel()
	mark := filepath.Join(t.TempDir(), "ran")
	l := &hosts.Local{Tracker: gatedTracker{refusingTracker{ended: make(chan hosts.Process, 1)}}}
	_, err := l.Run(bg, hosts.Host{Name: hosts.LocalHost}, "touch "+mark, hosts.Options{}, nil)
	if !errors.Is(err, hosts.ErrUnrecorded) {
		t.Errorf("the run returned %v; want it refused before it started", err)
	}
	if _, serr := os.Stat(mark); serr == nil {
		t.Error("the command ran although its gate refused")
	}
}
