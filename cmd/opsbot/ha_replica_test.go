package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opsbot/opsbot/store/replica/replicatest"
)

// haPod is one pod of a replicated pair: its own folder (the per-pod
// volume, with its database) and a Litestream sidecar beside it.
type haPod struct {
	dir     string
	sidecar *exec.Cmd
}

// newHAPod writes dir/c.yaml for a pod whose database is replicated to
// the replicas folder (the bucket), and starts its sidecar.
func newHAPod(t *testing.T, c *haCluster, replicas, extra string) *haPod {
	t.Helper()
	dir := t.TempDir()
	sock, side := replicatest.Sidecar(t, dir)
	yaml := fmt.Sprintf("web:\n  listen: 127.0.0.1:0\nlog:\n  format: json\nstore:\n  path: %s\n"+
		"approvals:\n  approvers:\n    - web:\n        users: [bob]\n"+
		"ha:\n  enabled: true\n  service_account: %s\n%s  litestream:\n    replica: file://%s\n    socket: %s\n    bin: %s\n    follow_interval: 250ms\n    sidecar_grace: 6s\n",
		filepath.Join(dir, "opsbot.db"), c.sa, extra, replicas, sock, replicatest.Binary(t))
	if err := os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return &haPod{dir: dir, sidecar: side}
}

// replicatedPair starts two replicated pods on one Lease and one replica
// folder: a leads, b stands by. extra is more of the ha section.
func replicatedPair(t *testing.T, extra string) (c *haCluster, replicas string, podA, podB *haPod, a, b *haBot) {
	t.Helper()
	c, replicas = newHACluster(t), t.TempDir()
	podA, podB = newHAPod(t, c, replicas, extra), newHAPod(t, c, replicas, extra)
	a = c.start(t, podA.dir, "opsbot-a")
	a.await(t, leadsLine, 2*time.Minute)
	b = c.start(t, podB.dir, "opsbot-b")
	return c, replicas, podA, podB, a, b
}

// TestHAFailoverReplicated: the pods have a database each, replicated by
// a Litestream sidecar. `kill -9` of the leader's pod (opsbot and its
// sidecar) with 3 approvals pending and 2 commands running: the standby,
// from nothing but the replica, is Ready within 30 s, every pending
// approval is there and runs once when approved, the cut commands are
// reported cut and never started again.
func TestHAFailoverReplicated(t *testing.T) {
	t.Parallel()
	_, replicas, podA, _, a, b := replicatedPair(t, "")
	// The pod dies whole: opsbot, then its sidecar, nothing flushed.
	failover(t, a, b, func() {
		a.cmd.Process.Kill()
		a.cmd.Wait()
		podA.sidecar.Process.Kill()
		podA.sidecar.Wait()
	}, func() {
		// The new leader's state came from its warm copy of the
		// replica, and it replicates to its own generation's.
		if _, err := os.Stat(filepath.Join(replicas, "generation-000001")); err != nil {
			t.Errorf("the new leader has no replica of its own generation: %v", err)
		}
	})
	if got := caughtUp(b); got != "the standby's copy" {
		t.Errorf("the new leader caught up by %q, not from the standby's warm copy", got)
	}
}

// TestHAPartitionReplicated: the Lease API refuses the leader's renewals.
// It stops acting before the standby leads; the standby leads on the
// replica's state, under the next generation, and the audit rows of the
// two generations do not interleave.
func TestHAPartitionReplicated(t *testing.T) {
	t.Parallel()
	c, _, _, podB, a, b := replicatedPair(t, "  retry_period: 1s\n")
	partition(t, c, a, b, filepath.Join(podB.dir, "opsbot.db"))
}

// caughtUp is how b caught up with the replica as it took the lead, as
// it logged it.
func caughtUp(b *haBot) string {
	re := regexp.MustCompile(`"msg":"caught up with the replica".*"by":"([^"]+)"`)
	for _, l := range b.seen {
		if m := re.FindStringSubmatch(l); m != nil {
			return m[1]
		}
	}
	return "nothing logged"
}

// TestHAApprovalJustBeforeThePodDies: the leader's pod dies a moment
// after it showed an approval card (nothing after it syncs the
// replica). The new leader has the request, shows its card in the
// thread (posted again if the card itself was lost), and an approval
// there runs the command once. Before, the request survived but its card
// did not in 2 of 3 runs: nothing in the thread could approve it.
func TestHAApprovalJustBeforeThePodDies(t *testing.T) {
	t.Parallel()
	_, _, podA, _, a, b := replicatedPair(t, "")
	out := t.TempDir()
	asks := askApprovals(t, a.base, out, 2)
	a.cmd.Process.Kill()
	podA.sidecar.Process.Kill()
	a.cmd.Wait()
	podA.sidecar.Wait()
	b.await(t, leadsLine, 30*time.Second)
	approveEachOnce(t, b.base, out, asks)
}

// TestHALeaderWhoseSidecarDies: the leader's sidecar dies. Its commands
// do not run and say why in words; the kubelet restarts the sidecar,
// which knows nothing, and the leader gives it the database again: the
// next command runs. When the sidecar stays dead past
// ha.litestream.sidecar_grace, the leader hands over and exits non-zero,
// and the standby leads. Before, a restarted sidecar was never given the
// database (every command refused for good), and a dead one kept its
// leader leading.
func TestHALeaderWhoseSidecarDies(t *testing.T) {
	t.Parallel()
	_, _, podA, _, a, b := replicatedPair(t, "")
	awaitInThread(t, a.base, postMessage(t, a.base, "@opsbot run local echo before"), "exit 0")
	out := t.TempDir()
	asked := postMessage(t, a.base, "@opsbot run local echo once >> "+out+"/approved")
	awaitInThread(t, a.base, asked, "Approve")

	podA.sidecar.Process.Kill()
	podA.sidecar.Wait()
	th := postMessage(t, a.base, "@opsbot run local echo during")
	awaitInThread(t, a.base, th, "could not copy its records to its replica")
	if texts := threadTexts(t, a.base, th); strings.Contains(texts, "transaction") || strings.Contains(texts, ".sock") {
		t.Errorf("the refusal reads as the sidecar's internals:\n%s", texts)
	}
	// An approval while the replica is down: its card does not say
	// "Approved" (a successor would not know it), and the thread says
	// why the command did not run.
	approveIn(t, a.base, asked)
	awaitInThread(t, a.base, asked, "could not copy its records to its replica")
	if texts := threadTexts(t, a.base, asked); strings.Contains(texts, "Approved by") {
		t.Errorf("the card shows an approval the replica does not hold:\n%s", texts)
	}
	if _, err := os.Stat(filepath.Join(out, "approved")); err == nil {
		t.Error("the approved command ran while its record could not reach the replica")
	}

	_, podA.sidecar = replicatest.Sidecar(t, podA.dir) // the kubelet restarts it
	awaitInThread(t, a.base, postMessage(t, a.base, "@opsbot run local echo after-restart"), "exit 0")

	podA.sidecar.Process.Kill()
	podA.sidecar.Wait()
	a.await(t, regexp.MustCompile(`handing the lead to the standby`), time.Minute)
	if err := a.cmd.Wait(); a.cmd.ProcessState.ExitCode() == 0 {
		t.Errorf("the leader without a sidecar exited 0 (%v)", err)
	}
	b.await(t, leadsLine, 30*time.Second)
	if code, body := httpStatus(t, b.base+"/readyz"); code != http.StatusOK {
		t.Fatalf("the new leader's /readyz: %d %s", code, body)
	}
	awaitInThread(t, b.base, postMessage(t, b.base, "@opsbot run local echo on-b"), "exit 0")
}

// TestHALeaseRecreatedKeepsTheReplica: opsbot is reinstalled with its
// bucket kept, so the Lease starts again at generation 0 while the
// replica holds generation 0's database. The new leader moves the Lease
// past it and starts from that state; before, it took generation 0
// again, kept its own empty database and replicated it over the old.
func TestHALeaseRecreatedKeepsTheReplica(t *testing.T) {
	t.Parallel()
	replicas := t.TempDir()
	c1 := newHACluster(t)
	podA := newHAPod(t, c1, replicas, "")
	a := c1.start(t, podA.dir, "opsbot-a")
	a.await(t, leadsLine, 2*time.Minute)
	th := postMessage(t, a.base, "@opsbot run local echo first-life")
	awaitInThread(t, a.base, th, "exit 0")
	a.cmd.Process.Signal(syscall.SIGTERM) // helm uninstall
	a.cmd.Wait()
	podA.sidecar.Process.Kill()
	podA.sidecar.Wait()

	c2 := newHACluster(t) // a new Lease, generation 0 again
	podB := newHAPod(t, c2, replicas, "")
	b := c2.start(t, podB.dir, "opsbot-b")
	b.await(t, regexp.MustCompile(`"msg":"the replica holds generations from before this Lease`), 2*time.Minute)
	b.await(t, leadsLine, time.Minute)
	if texts := threadTexts(t, b.base, th); !strings.Contains(texts, "first-life") {
		t.Errorf("the new leader does not have the first install's thread:\n%s", texts)
	}
	if l, _, _ := c2.api.Lease("ops", "opsbot"); l.Spec.LeaseTransitions != 1 {
		t.Errorf("the new Lease's generation is %d, want 1 (past the replica's 0)", l.Spec.LeaseTransitions)
	}
	if _, err := os.Stat(filepath.Join(replicas, "generation-000001")); err != nil {
		t.Errorf("the new leader does not replicate to a generation of its own: %v", err)
	}
}
