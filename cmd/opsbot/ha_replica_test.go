package main

import (
	"bufio"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/hosts/sshtest"
)

// litestreamBinary is $OPSBOT_LITESTREAM: the pinned litestream `make
// test` builds once per machine.
func litestreamBinary(t *testing.T) string {
	t.Helper()
	p := os.Getenv("OPSBOT_LITESTREAM")
	if p == "" {
		t.Fatal("OPSBOT_LITESTREAM is not set: run the tests with `make test` (it builds the pinned litestream once per machine), or set it to a litestream v0.5 binary")
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("litestream is not built at %s: run `make test` (it builds it once per machine)", p)
	}
	return p
}

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
	bin := litestreamBinary(t)
	dir := t.TempDir()
	sock := filepath.Join(dir, "ls.sock")
	os.WriteFile(filepath.Join(dir, "litestream.yml"), fmt.Appendf(nil, "socket:\n  enabled: true\n  path: %s\ndbs: []\n", sock), 0o600)
	yaml := fmt.Sprintf("web:\n  listen: 127.0.0.1:0\nlog:\n  format: json\nstore:\n  path: %s\n"+
		"approvals:\n  approvers:\n    - web:\n        users: [bob]\n"+
		"ha:\n  enabled: true\n  service_account: %s\n%s  litestream:\n    replica: file://%s\n    socket: %s\n    bin: %s\n    follow_interval: 250ms\n",
		filepath.Join(dir, "opsbot.db"), c.sa, extra, replicas, sock, bin)
	if err := os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	side := exec.Command(bin, "replicate", "-config", filepath.Join(dir, "litestream.yml"))
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	side.Stdout, side.Stderr = w, w
	if err := side.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { side.Process.Kill(); side.Wait() })
	// Ready once its control socket listens (it says so).
	listening := make(chan bool, 1)
	go func() {
		defer r.Close()
		s, said := bufio.NewScanner(r), false
		for s.Scan() {
			if !said && strings.Contains(s.Text(), "control socket listening") {
				said = true
				listening <- true
			}
		}
		if !said {
			listening <- false
		}
	}()
	select {
	case ok := <-listening:
		if !ok {
			t.Fatal("the litestream sidecar ended before its control socket listened")
		}
	case <-time.After(time.Minute):
		t.Fatal("the litestream sidecar's control socket did not listen within a minute")
	}
	return &haPod{dir: dir, sidecar: side}
}

// TestHAFailoverReplicated: the pods have a database each, replicated by
// a Litestream sidecar. `kill -9` of the leader's pod (opsbot and its
// sidecar) with 3 approvals pending and 2 commands running: the standby,
// from nothing but the replica, is Ready within 30 s, every pending
// approval is there and runs once when approved, the cut commands are
// reported cut and never started again.
func TestHAFailoverReplicated(t *testing.T) {
	t.Parallel()
	c, replicas := newHACluster(t), t.TempDir()
	podA, podB := newHAPod(t, c, replicas, ""), newHAPod(t, c, replicas, "")
	a := c.start(t, podA.dir, "opsbot-a")
	a.await(t, leadsLine, 2*time.Minute)
	b := c.start(t, podB.dir, "opsbot-b")
	if code, body := httpStatus(t, b.base+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "standby") {
		t.Fatalf("standby's /readyz: %d %s", code, body)
	}
	out := t.TempDir()
	var asks []string
	for i := range 3 {
		th := postMessage(t, a.base, fmt.Sprintf("@opsbot run local echo once >> %s/approved-%d", out, i))
		awaitInThread(t, a.base, th, "Approve")
		asks = append(asks, th)
	}
	var cut, sleeps []string
	var procs []*sshtest.Proc
	defer func() {
		for _, p := range procs {
			p.Close()
		}
	}()
	for range 2 {
		sleep := fmt.Sprintf("sleep 600.%06d", rand.IntN(1_000_000))
		command := sleep + " | { until pgrep -f '^" + sleep + "$' >/dev/null; do :; done; printf 'sleep-%s\\n' forked; cat; }"
		th := postMessage(t, a.base, "@opsbot run local "+command)
		awaitInThread(t, a.base, th, "sleep-forked")
		p, err := sshtest.Find(sleep)
		if err != nil || len(p) == 0 {
			t.Fatalf("no process %q (%v)", sleep, err)
		}
		procs = append(procs, p...)
		cut, sleeps = append(cut, th), append(sleeps, sleep)
	}
	// The pod dies whole: opsbot, then its sidecar, nothing flushed.
	a.cmd.Process.Kill()
	killed := time.Now()
	a.cmd.Wait()
	podA.sidecar.Process.Kill()
	podA.sidecar.Wait()
	// From its warm copy: the standby followed the leader's replica.
	caught := b.await(t, regexp.MustCompile(`"msg":"caught up with the replica".*"by":"([^"]+)"`), 30*time.Second)
	if caught[1] != "the standby's copy" {
		t.Errorf("the new leader caught up by %s, not from the standby's warm copy", caught[1])
	}
	b.await(t, leadsLine, 30*time.Second)
	if code, body := httpStatus(t, b.base+"/readyz"); code != http.StatusOK {
		t.Fatalf("the new leader's /readyz: %d %s", code, body)
	}
	if ready := time.Since(killed); ready > 30*time.Second {
		t.Errorf("the standby was Ready %s after kill -9 of the leader; want ≤ 30 s", ready)
	}
	t.Logf("the standby was Ready %s after kill -9 of the leader", time.Since(killed).Round(time.Millisecond))
	for _, p := range procs {
		if !p.Wait(2 * time.Minute) {
			t.Errorf("process %d still runs after the failover", p.Pid)
		}
	}
	for _, th := range cut {
		if texts := threadTexts(t, b.base, th); !strings.Contains(texts, "Cut off:") {
			t.Errorf("the thread does not say its command was cut off:\n%s", texts)
		}
	}
	for _, sleep := range sleeps {
		if left := sshtest.Processes(sleep); len(left) > 0 {
			t.Errorf("a cut command runs again after the failover: %v", left)
		}
	}
	for i, th := range asks {
		approveIn(t, b.base, th)
		awaitInThread(t, b.base, th, "exit 0")
		got, _ := os.ReadFile(filepath.Join(out, fmt.Sprintf("approved-%d", i)))
		if string(got) != "once\n" {
			t.Errorf("approved command %d ran %d times", i, strings.Count(string(got), "once"))
		}
	}
	// The new leader replicates to its own generation's replica.
	if _, err := os.Stat(filepath.Join(replicas, "generation-000001")); err != nil {
		t.Errorf("the new leader has no replica of its own generation: %v", err)
	}
}

// TestHAPartitionReplicated: the Lease API refuses the leader's renewals.
// It stops acting before the standby leads; the standby leads on the
// replica's state, under the next generation, and the audit rows of the
// two generations do not interleave.
func TestHAPartitionReplicated(t *testing.T) {
	t.Parallel()
	c, replicas := newHACluster(t), t.TempDir()
	podA, podB := newHAPod(t, c, replicas, "  retry_period: 1s\n"), newHAPod(t, c, replicas, "  retry_period: 1s\n")
	a := c.start(t, podA.dir, "opsbot-a")
	a.await(t, leadsLine, 2*time.Minute)
	b := c.start(t, podB.dir, "opsbot-b")
	awaitInThread(t, a.base, postMessage(t, a.base, "@opsbot run local echo gen-a"), "gen-a")

	c.api.Refuse("opsbot-a", true)
	a.await(t, regexp.MustCompile(`leadership lost`), time.Minute)
	for len(b.lines) > 0 {
		if l := <-b.lines; leadsLine.MatchString(l) {
			t.Fatalf("the standby led before the old leader stopped acting: %s", l)
		}
	}
	if err := a.cmd.Wait(); a.cmd.ProcessState.ExitCode() == 0 {
		t.Errorf("the deposed leader exited 0 (%v)", err)
	}
	b.await(t, leadsLine, time.Minute)
	th := postMessage(t, b.base, "@opsbot run local echo gen-b")
	awaitInThread(t, b.base, th, "gen-b")

	db, err := sql.Open("sqlite3", "file:"+filepath.Join(podB.dir, "opsbot.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	deadline, tick := time.Now().Add(time.Minute), time.NewTicker(50*time.Millisecond)
	defer tick.Stop()
	for {
		var n int
		db.QueryRow(`SELECT count(*) FROM audit WHERE generation = 1 AND action = 'command.end'`).Scan(&n)
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the new leader's command has no end row in the audit after a minute")
		}
		<-tick.C // polls the file: no event crosses the processes
	}
	rows, err := db.Query(`SELECT generation FROM audit ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var gens []int64
	for rows.Next() {
		var g int64
		rows.Scan(&g)
		if len(gens) > 0 && g < gens[len(gens)-1] {
			t.Fatalf("audit generations interleave: %v then %d", gens, g)
		}
		gens = append(gens, g)
	}
	if len(gens) == 0 || gens[0] != 0 || gens[len(gens)-1] != 1 {
		t.Errorf("audit generations %v: want rows of generation 0 (from the replica), then of 1", gens)
	}
}
