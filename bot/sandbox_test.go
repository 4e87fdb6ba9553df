package bot

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/executor"
	"github.com/opsbot/opsbot/policy"
)

// A classifier mistake is not a breach: with a rule that wrongly allows
// touch, `run local touch FILE` runs at once, without a person, and the
// sandbox refuses the write; the same command approved by a person runs
// outside it and writes.
func TestRunLocalOfAnAllowedCommandRunsInTheSandbox(t *testing.T) {
	t.Parallel()
	conn := newFakeConn(webLimits)
	conn.name = "web"
	dir := t.TempDir()
	mistake := policy.PolicyConfig{Rules: []policy.RuleConfig{{Program: "touch", Args: []string{"*/allowed-by-mistake"}, Action: "allow"}}}
	b, stop := startBot(t, dir, conn, botOptions{policy: mistake})
	t.Cleanup(stop)
	h := &harness{t: t, bot: b, conn: conn, st: storeOf(b), dir: dir, stop: stop}

	h.say("alice", "t1", "run local echo hello from the sandbox")
	h.eventually("the output", h.has("t1", "hello from the sandbox"))

	target := filepath.Join(dir, "allowed-by-mistake")
	h.say("alice", "t2", "run local touch "+target)
	if hosts.SandboxSupport() == nil {
		h.eventually("the refusal of the write", h.has("t2", refusedWrite()))
		h.eventually("the failed run", h.has("t2", "exit 1"))
	} else { // a kernel without Landlock: nothing runs without the sandbox
		h.eventually("the refusal to run", h.has("t2", "so the command did not run"))
	}
	if _, err := os.Stat(target); err == nil {
		t.Fatal("a command that ran without a person wrote outside its sandbox")
	}

	approved := filepath.Join(dir, "approved")
	h.say("alice", "t3", "run local touch "+approved)
	h.eventually("the approval card", h.has("t3", "Approval needed"))
	card, ref, _ := h.find("t3", "Approval needed")
	h.click("bob", card, ref, ActionApprove)
	h.eventually("the approved command to write", func() bool { _, err := os.Stat(approved); return err == nil })
}

// refusedWrite is how the sandbox refuses a write on this host: its file
// system is read-only, or where it cannot have a mount namespace,
// Landlock refuses.
func refusedWrite() string {
	if hosts.SandboxIsolation() == nil {
		return "Read-only file system"
	}
	return "Permission denied"
}

// The acceptance line of issue 24: a classifier miss, simulated by
// declaring a writer read-only (policy.allow: [touch]), runs without a
// card and writes nothing.
func TestRunLocalOfAWriterAllowedByMistakeWritesNothing(t *testing.T) {
	t.Parallel()
	if err := hosts.SandboxSupport(); err != nil {
		t.Fatalf("this kernel cannot run the sandbox: %v", err)
	}
	conn := newFakeConn(webLimits)
	conn.name = "web"
	dir := t.TempDir()
	b, stop := startBot(t, dir, conn, botOptions{policy: policy.PolicyConfig{Allow: []string{"touch"}}})
	t.Cleanup(stop)
	h := &harness{t: t, bot: b, conn: conn, st: storeOf(b), dir: dir, stop: stop}
	target := filepath.Join(dir, "x")
	h.say("alice", "t1", "run local touch "+target)
	h.eventually("the refusal of the write", h.has("t1", refusedWrite()))
	h.eventually("the failed run", h.has("t1", "exit 1"))
	if h.has("t1", "Approval needed")() {
		t.Error("the allowed command asked for approval; the miss was to run without a card")
	}
	if _, err := os.Stat(target); err == nil {
		t.Fatal("a command allowed by mistake wrote outside its sandbox")
	}
}

// What the Guard hands over for an unapproved run reaches the local
// sandbox: the policy's secret paths are masked, its Env is set.
func TestFleetExecutorPassesHiddenAndEnvToTheSandbox(t *testing.T) {
	t.Parallel()
	if err := hosts.SandboxSupport(); err != nil {
		t.Fatalf("this kernel cannot run the sandbox: %v", err)
	}
	if err := hosts.SandboxIsolation(); err != nil {
		if testing.Short() {
			t.Skipf("needs root for the sandbox's mount namespace (go test -short skips this; make test runs it as root): %v", err)
		}
		t.Fatalf("this host cannot mask paths for the sandbox: %v", err)
	}
	fleet, err := hosts.NewFleet(hosts.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	secret := filepath.Join(t.TempDir(), "masked")
	if err := os.WriteFile(secret, []byte("SECRET-TOKEN"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := hosts.Confinement{Hidden: []string{secret}, Env: []string{"OPSBOT_UNATTENDED=yes"}}
	res := (&executor.Fleet{Fleet: fleet}).Exec(context.Background(), []string{"local"}, `echo "$OPSBOT_UNATTENDED"; cat `+secret, hosts.ExecOptions{Confinement: c})
	if out := res[0].Stdout + res[0].Stderr; strings.Contains(out, "SECRET-TOKEN") || !strings.Contains(out, "yes") || !strings.Contains(out, "Permission denied") {
		t.Errorf("output %q; want the Env applied and the secret masked", out)
	}
}
