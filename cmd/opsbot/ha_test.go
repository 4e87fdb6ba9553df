package main

import (
	"bufio"
	"database/sql"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/hosts/sshtest"
	"github.com/opsbot/opsbot/store/leader/leasetest"
)

// haCluster is a Lease API over TLS and the service-account folder (CA,
// token) and environment that lead an opsbot to it.
type haCluster struct {
	api *leasetest.Server
	sa  string
	env []string
}

func newHACluster(t *testing.T) *haCluster {
	t.Helper()
	api := leasetest.New("ha-token")
	srv := httptest.NewTLSServer(api)
	t.Cleanup(srv.Close)
	sa := t.TempDir()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	os.WriteFile(filepath.Join(sa, "ca.crt"), ca, 0o600)
	os.WriteFile(filepath.Join(sa, "token"), []byte("ha-token"), 0o600)
	host, port, _ := strings.Cut(strings.TrimPrefix(srv.URL, "https://"), ":")
	return &haCluster{api: api, sa: sa, env: []string{"KUBERNETES_SERVICE_HOST=" + host, "KUBERNETES_SERVICE_PORT=" + port, "POD_NAMESPACE=ops"}}
}

// haBot is one `opsbot run` with ha on: its log lines as they come.
type haBot struct {
	cmd   *exec.Cmd
	lines chan string
	base  string
	seen  []string // the lines await has read
	c     *haCluster
	pod   string // its pod's name, in namespace ops
}

// start runs `opsbot run` as pod id over dir's config, and returns once
// it listens (as the standby or the leader).
func (c *haCluster) start(t *testing.T, dir, id string) *haBot {
	t.Helper()
	cmd := opsbot(t, dir, "run", "--config", filepath.Join(dir, "c.yaml"))
	cmd.Env = append(cmd.Env, append(c.env, "POD_NAME="+id)...)
	c.api.AddPod("ops", id)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	b := &haBot{cmd: cmd, lines: make(chan string, 1024), c: c, pod: id}
	go func() {
		defer close(b.lines)
		s := bufio.NewScanner(stderr)
		s.Buffer(make([]byte, 1<<20), 1<<20)
		for s.Scan() {
			b.lines <- s.Text()
		}
		io.Copy(io.Discard, stderr)
	}()
	m := b.await(t, regexp.MustCompile(`"listen":"(http://[^"]+)"`), 2*time.Minute)
	b.base = m[1]
	return b
}

// await returns the first log line matching re, failing the test if the
// process ends or limit passes first.
func (b *haBot) await(t *testing.T, re *regexp.Regexp, limit time.Duration) []string {
	t.Helper()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		select {
		case l, ok := <-b.lines:
			if !ok {
				t.Fatalf("opsbot ended before logging %s; its last lines:\n%s", re, strings.Join(b.seen[max(len(b.seen)-8, 0):], "\n"))
			}
			b.seen = append(b.seen, l)
			if m := re.FindStringSubmatch(l); m != nil {
				return m
			}
		case <-timer.C:
			t.Fatalf("no log line %s within %s", re, limit)
		}
	}
}

// awaitRole waits until b's pod carries the role label the chart's
// Service selects on, failing the test after limit.
func (b *haBot) awaitRole(t *testing.T, role string, limit time.Duration) {
	t.Helper()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		labels, changed := b.c.api.PodLabels("ops", b.pod)
		if labels["opsbot.dev/role"] == role {
			// A rollout deletes the standby first (pod-deletion-cost).
			if got, want := b.c.api.PodAnnotations("ops", b.pod)[deletionCost], costOf(role); got != want {
				t.Fatalf("pod %s (%s) has deletion cost %q, want %q", b.pod, role, got, want)
			}
			return
		}
		select {
		case <-changed:
		case <-timer.C:
			t.Fatalf("pod %s is labelled %v after %s; want opsbot.dev/role=%s", b.pod, labels, limit, role)
		}
	}
}

func httpStatus(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var (
	leadsLine = regexp.MustCompile(`"msg":"opsbot started"`)
)

// haConfig writes dir/c.yaml: a web bot with ha on, bob approving.
func haConfig(t *testing.T, dir string, c *haCluster) {
	t.Helper()
	yaml := fmt.Sprintf("web:\n  listen: 127.0.0.1:0\nlog:\n  format: json\nstore:\n  path: %s\n"+
		"approvals:\n  approvers:\n    - web:\n        users: [bob]\n"+
		"ha:\n  enabled: true\n  service_account: %s\n", filepath.Join(dir, "opsbot.db"), c.sa)
	if err := os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestHAFailover: two `opsbot run` on one Lease; `kill -9` of the leader
// with 3 approvals pending and 2 commands running. The standby is Ready
// within 30 s, every pending approval is there and runs once when
// approved, and the cut commands are ended, reported as cut, and never
// started again.
func TestHAFailover(t *testing.T) {
	t.Parallel()
	dir, c := t.TempDir(), newHACluster(t)
	haConfig(t, dir, c)
	a := c.start(t, dir, "opsbot-a")
	a.await(t, leadsLine, 2*time.Minute)
	b := c.start(t, dir, "opsbot-b")
	if code, _ := httpStatus(t, b.base+"/healthz"); code != http.StatusOK {
		t.Fatalf("standby's /healthz: %d", code)
	}
	failover(t, a, b, func() {
		a.cmd.Process.Kill()
		a.cmd.Wait()
	})
}

// failover is the failover test on leader a and standby b: 3 approvals
// pending and 2 commands running when kill kills the leader; the standby
// is Ready within 30 s, every pending approval is there and runs once
// when approved, and the cut commands are ended, reported as cut, and
// never started again. afterLead, when set, runs once b leads.
func failover(t *testing.T, a, b *haBot, kill func(), afterLead ...func()) {
	t.Helper()
	if code, body := httpStatus(t, b.base+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "standby") {
		t.Fatalf("standby's /readyz: %d %s", code, body)
	}
	if code, body := httpStatus(t, a.base+"/readyz"); code != http.StatusOK {
		t.Fatalf("leader's /readyz: %d %s", code, body)
	}
	// The Service sends HTTP traffic to the pod labelled leader.
	a.awaitRole(t, "leader", 30*time.Second)
	b.awaitRole(t, "standby", 30*time.Second)
	out := t.TempDir()
	asks := askApprovals(t, a.base, out, 3)
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
	killed := time.Now()
	kill()
	b.await(t, leadsLine, 30*time.Second)
	if code, body := httpStatus(t, b.base+"/readyz"); code != http.StatusOK {
		t.Fatalf("the new leader's /readyz: %d %s", code, body)
	}
	if ready := time.Since(killed); ready > 30*time.Second {
		t.Errorf("the standby was Ready %s after kill -9 of the leader; want ≤ 30 s", ready)
	}
	t.Logf("the standby was Ready %s after kill -9 of the leader", time.Since(killed).Round(time.Millisecond))
	b.awaitRole(t, "leader", 30*time.Second)
	for _, f := range afterLead {
		f()
	}
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
	approveEachOnce(t, b.base, out, asks)
}

// askApprovals asks n commands that need an approval, each in a thread
// of its own (`echo once >> out/approved-i`), and returns the threads
// once each shows its card.
func askApprovals(t *testing.T, base, out string, n int) []string {
	t.Helper()
	var asks []string
	for i := range n {
		th := postMessage(t, base, fmt.Sprintf("@opsbot run local echo once >> %s/approved-%d", out, i))
		awaitInThread(t, base, th, "Approve")
		asks = append(asks, th)
	}
	return asks
}

// approveEachOnce approves, on the opsbot at base, each request
// askApprovals asked, and checks each command ran exactly once.
func approveEachOnce(t *testing.T, base, out string, asks []string) {
	t.Helper()
	for i, th := range asks {
		awaitInThread(t, base, th, "Approve")
		approveIn(t, base, th)
		awaitInThread(t, base, th, "exit 0")
		got, _ := os.ReadFile(filepath.Join(out, fmt.Sprintf("approved-%d", i)))
		if string(got) != "once\n" {
			t.Errorf("approved command %d ran %d times", i, strings.Count(string(got), "once"))
		}
	}
}

// approveIn clicks Approve, as bob, on the approval card in thread.
func approveIn(t *testing.T, base, thread string) {
	t.Helper()
	resp, err := http.Get(base + "/api/threads/" + thread + "/messages")
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Messages []struct {
			ID      string
			Buttons []struct {
				ActionID string `json:"action_id"`
				Value    string
			}
		}
	}
	json.NewDecoder(resp.Body).Decode(&res)
	resp.Body.Close()
	for _, m := range res.Messages {
		for _, btn := range m.Buttons {
			if btn.ActionID == "approve" {
				body, _ := json.Marshal(map[string]string{"message_id": m.ID, "action_id": "approve", "value": btn.Value, "user": "bob"})
				r, err := http.Post(base+"/api/actions", "application/json", strings.NewReader(string(body)))
				if err != nil || r.StatusCode/100 != 2 {
					t.Fatalf("approve in %s: %v %v", thread, err, r)
				}
				r.Body.Close()
				return
			}
		}
	}
	t.Fatalf("no pending approval in thread %s after the failover", thread)
}

// TestHAPartition: the Lease API refuses the leader's renewals. It says
// it stopped acting before the standby leads, exits non-zero, and the
// audit rows of the two generations do not interleave.
func TestHAPartition(t *testing.T) {
	t.Parallel()
	dir, c := t.TempDir(), newHACluster(t)
	haConfig(t, dir, c)
	f, _ := os.OpenFile(filepath.Join(dir, "c.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("  retry_period: 1s\n")
	f.Close()
	a := c.start(t, dir, "opsbot-a")
	a.await(t, leadsLine, 2*time.Minute)
	b := c.start(t, dir, "opsbot-b")
	partition(t, c, a, b, filepath.Join(dir, "opsbot.db"))
}

// partition is the partition test on leader a and standby b: the Lease
// API refuses a's renewals; a says it stopped acting before b leads and
// exits non-zero, and the audit rows in the database at db (the new
// leader's) are of generation 0, then 1, never interleaved.
func partition(t *testing.T, c *haCluster, a, b *haBot, db string) {
	t.Helper()
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
	awaitInThread(t, b.base, postMessage(t, b.base, "@opsbot run local echo gen-b"), "gen-b")

	conn, err := sql.Open("sqlite3", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// The new leader's rows: its answer can show before its end row is
	// group-committed, so wait for them (a condition, not a guess).
	deadline, tick := time.Now().Add(time.Minute), time.NewTicker(50*time.Millisecond)
	defer tick.Stop()
	for {
		var n int
		conn.QueryRow(`SELECT count(*) FROM audit WHERE generation = 1 AND action = 'command.end'`).Scan(&n)
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the new leader's command has no end row in the audit after a minute")
		}
		<-tick.C // polls the file: no event crosses the processes
	}
	rows, err := conn.Query(`SELECT generation FROM audit ORDER BY id`)
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
		t.Errorf("audit generations %v: want rows of generation 0, then of 1", gens)
	}
}
