package executor

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/sshtest"
	"github.com/opsbot/opsbot/store"
)

var fanOutHosts = flag.Int("fanout-hosts", 100, "hosts in BenchmarkAuditedFanOut's loopback fleet")

// BenchmarkAuditedFanOut times `uptime` on every host of a loopback fleet
// (hosts/sshtest, the hosts/bench fleet), one op a round, cold (every
// host dialled afresh) and warm (connections kept), four ways: "raw" is
// bare golang.org/x/crypto/ssh running the same wrapper opsbot sends, at
// the same fan-out (64), the reference of issue 28's targets; "opsbot" is
// hosts.RunMany over a hosts.Pool with no audit trail;
// "audited-one-commit-a-row" audits as `opsbot hosts exec` did before
// issue 28, each host's start and end a commit of its own (SQLite,
// synchronous=FULL, on disk); "audited" audits as it does now, the rows
// group-committed.
//
//	go test -run '^$' -bench AuditedFanOut -benchtime 5x -count 3 ./hosts/executor/ [-args -fanout-hosts 1000]
func BenchmarkAuditedFanOut(b *testing.B) {
	fl := newBenchFleet(b, *fanOutHosts)
	for _, warm := range []bool{false, true} {
		for _, c := range fl.contenders(b) {
			name := "cold/" + c.name
			if warm {
				name = "warm/" + c.name
			}
			b.Run(name, func(b *testing.B) {
				if warm { // connect before the clock starts (b.Loop resets it)
					if err := c.round(context.Background(), true); err != nil {
						b.Fatal(err)
					}
				}
				cpu := processCPU()
				for b.Loop() {
					if err := c.round(context.Background(), warm); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64((processCPU()-cpu).Milliseconds())/float64(b.N), "cpu-ms/op")
			})
		}
	}
}

// processCPU is the user plus system CPU time this process has used: the
// client side's own cost of a round, apart from the fleet's sshds.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type benchFleet struct {
	srv   *sshtest.Fleet
	hosts []hosts.Host
	cfg   hosts.Config
	st    *store.Store
}

type contender struct {
	name  string
	round func(ctx context.Context, warm bool) error
}

func newBenchFleet(b *testing.B, n int) *benchFleet {
	dir := b.TempDir()
	var addrs []string
	for i := range n {
		addrs = append(addrs, fmt.Sprintf("127.0.%d.%d", (i+2)/256, (i+2)%256))
	}
	srv, err := sshtest.NewFleet(dir, addrs, sshtest.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.Stop)
	st, err := store.Open(context.Background(), store.Config{Path: filepath.Join(dir, "opsbot.db")})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	f := &benchFleet{srv: srv, st: st, cfg: hosts.Config{
		SSH: hosts.SSHConfig{KnownHosts: srv.KnownHosts, IdentityFiles: []string{srv.IdentityFile}, User: srv.User, ConnectTimeout: time.Minute}}}
	for i, a := range srv.Addrs {
		f.hosts = append(f.hosts, hosts.Host{Name: fmt.Sprintf("h%03d", i+1), Address: a})
	}
	return f
}

func (f *benchFleet) contenders(b *testing.B) []contender {
	raw := newRawClient(b, f.srv)
	warm, err := hosts.NewPool(f.cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { warm.Close(); raw.close() })
	pooled := func(audit Auditor) func(context.Context, bool) error {
		return func(ctx context.Context, isWarm bool) error {
			p := warm
			if !isWarm {
				if p, err = hosts.NewPool(f.cfg); err != nil {
					return err
				}
				defer p.Close()
			}
			var r hosts.Runner = p
			if audit != nil {
				r = AuditedRunner{Runner: p, Audit: audit, Actor: "console:bench"}
			}
			return checkRound(hosts.RunMany(ctx, r, f.hosts, "uptime", hosts.Options{}, hosts.FanOut{}))
		}
	}
	return []contender{
		{"raw", func(ctx context.Context, isWarm bool) error { return raw.round(ctx, f.hosts, isWarm) }},
		{"opsbot", pooled(nil)},
		{"audited-one-commit-a-row", pooled(&oneCommitARow{st: f.st})},
		{"audited", pooled(storeTrail{f.st})},
	}
}

func checkRound(results []hosts.HostResult) error {
	for _, r := range results {
		if r.Err != nil || !strings.Contains(string(r.Result.Output), "load average") {
			return fmt.Errorf("%s: %v %s", r.Host.Name, r.Err, r.Result.Output)
		}
	}
	return nil
}

// oneCommitARow is the store's audit trail as it was before group commit:
// one row, one transaction; the calls queue on the one writer.
type oneCommitARow struct {
	mu sync.Mutex
	st *store.Store
}

func (o *oneCommitARow) Audit(ctx context.Context, e AuditEntry) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.st.Audit().AuditBatch(ctx, []store.AuditEntry{store.AuditEntry(e)})
}

// rawWrapped is the line opsbot sends for `uptime` (hosts' wrapLine, with
// a fixed token and the 60 s default deadline), so that the raw client's
// hosts do the same work (timeout(1), a second bash).
const rawWrapped = `echo opsbot-pid:bench:$$ >&2; command -v bash >/dev/null 2>&1 || { echo 'opsbot: bash is required' >&2; exit 126; }; ` +
	`exec env -u BASH_ENV -u ENV -u SHELLOPTS -u BASHOPTS -u POSIXLY_CORRECT 'GIT_OPTIONAL_LOCKS=0' timeout -k 5s 60s bash -c 'uptime' 'opsbot-run-bench'`

// rawClient is bare x/crypto/ssh: a client per host, a session per
// command, host keys checked against the fleet's known_hosts.
type rawClient struct {
	cfg     *ssh.ClientConfig
	mu      sync.Mutex
	clients map[string]*ssh.Client // warm: kept between rounds
}

func newRawClient(b *testing.B, srv *sshtest.Fleet) *rawClient {
	key, err := os.ReadFile(srv.IdentityFile)
	if err != nil {
		b.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(key)
	if err != nil {
		b.Fatal(err)
	}
	check, err := knownhosts.New(srv.KnownHosts)
	if err != nil {
		b.Fatal(err)
	}
	cfg := &ssh.ClientConfig{User: srv.User, Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)}, HostKeyCallback: check, Timeout: time.Minute}
	return &rawClient{cfg: cfg, clients: map[string]*ssh.Client{}}
}

// round runs the wrapped uptime on every host, 64 at a time (opsbot's
// default fan-out).
func (c *rawClient) round(ctx context.Context, list []hosts.Host, warm bool) error {
	r := hosts.RunnerFunc(func(_ context.Context, h hosts.Host, _ string, _ hosts.Options, _ func(hosts.Chunk)) (hosts.Result, error) {
		return hosts.Result{Host: h.Name}, c.run(h, warm)
	})
	for _, res := range hosts.RunMany(ctx, r, list, "", hosts.Options{}, hosts.FanOut{}) {
		if res.Err != nil {
			return res.Err
		}
	}
	return nil
}

func (c *rawClient) run(h hosts.Host, warm bool) error {
	client, err := c.client(h, warm)
	if err != nil {
		return err
	}
	if !warm {
		defer client.Close()
	}
	sess, err := client.NewSession()
	if err != nil {
		return fmt.Errorf("%s: %w", h.Address, err)
	}
	defer sess.Close()
	out, err := sess.Output(rawWrapped)
	if err != nil || !strings.Contains(string(out), "load average") {
		return fmt.Errorf("%s: %v: %s", h.Address, err, out)
	}
	return nil
}

func (c *rawClient) client(h hosts.Host, warm bool) (*ssh.Client, error) {
	c.mu.Lock()
	cl := c.clients[h.Address]
	c.mu.Unlock()
	if warm && cl != nil {
		return cl, nil
	}
	cl, err := ssh.Dial("tcp", h.Address, c.cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", h.Address, err)
	}
	if warm {
		c.mu.Lock()
		c.clients[h.Address] = cl
		c.mu.Unlock()
	}
	return cl, nil
}

func (c *rawClient) close() {
	for _, cl := range c.clients {
		cl.Close()
	}
}
