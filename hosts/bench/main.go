// Command bench times a fan-out of `uptime` over a loopback fleet with
// opsbot's hosts package and with the usual tools, side by side in one run:
//
//   - opsbot cold: a new hosts.Pool, so every host is dialled and
//     authenticated; warm: the same pool again, connections reused;
//   - parallel-ssh -p 32 (cold: one ssh process per host);
//   - Ansible ad-hoc: ansible all -m command -a uptime -f 100 (cold: no
//     ControlPersist socket left from an earlier run);
//   - OpenSSH ControlMaster (warm): one master per host opened beforehand,
//     then `ssh host uptime` for all hosts at once over the masters.
//
// The fleet is a few sshd processes (hosts/sshtest; one listens on at most
// 16 addresses) on 127.0.0.2 … 127.0.0.N+1; each address is a host with its
// own known_hosts entry. Runs
// alternate between tools so that drift hits all of them alike; the table
// shows each tool's median and the ratios the targets are stated in.
//
//	go run ./hosts/bench -hosts 100 -runs 5
//	go run ./hosts/bench -hosts 100 -runs 5 -sandbox -skip ansible
//	go run ./hosts/bench -hosts 1000 -serve DIR   # then: opsbot hosts exec group:fleet --config DIR/opsbot.yaml -- uptime
//	bench -raw DIR                                # the raw reference over DIR's fleet
//
// With -sandbox, two more rows run opsbot's commands as the ones no person
// approved do: inside bubblewrap on each host (hosts.RemoteBwrap), the
// default secret paths masked; cold includes each host's probe. -skip
// leaves out the tools whose name contains it.
//
// Needs /usr/sbin/sshd (openssh-server), parallel-ssh (pssh), ansible and
// ssh (openssh-client); a missing tool is an error, not a skipped row.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/sshtest"
	"github.com/opsbot/opsbot/policy"
)

func main() {
	n := flag.Int("hosts", 100, "hosts in the fleet")
	runs := flag.Int("runs", 5, "timed runs per tool (Ansible: at most 3, it is slow)")
	only := flag.String("only", "", "run only the tools whose name contains this (e.g. opsbot)")
	skip := flag.String("skip", "", "leave out the tools whose name contains this (e.g. ansible)")
	flag.BoolVar(&sandboxed, "sandbox", false, "add opsbot rows whose commands run in the SSH hosts' sandbox (bubblewrap), as unapproved commands run")
	flag.IntVar(&concurrency, "concurrency", 0, "opsbot's fan-out and dial concurrency (0: the defaults, 64)")
	serveDir := flag.String("serve", "", "start the fleet in this directory, write opsbot.yaml there and keep it until SIGINT")
	rawDir := flag.String("raw", "", "run the raw x/crypto/ssh reference once over the fleet a -serve keeps in this directory")
	warmDir := flag.String("raw-warm", "", "time warm rounds of raw x/crypto/ssh over the fleet a -serve keeps in this directory, sending the line in -line")
	lineFile := flag.String("line", "", "with -raw-warm: a file holding the exact line opsbot sends (captured from a run)")
	flag.Parse()
	var err error
	switch {
	case *warmDir != "":
		err = rawWarm(*warmDir, *lineFile, *runs)
	case *serveDir != "":
		err = serve(*serveDir, *n)
	case *rawDir != "":
		err = raw(*rawDir)
	default:
		err = run(*n, *runs, *only, *skip)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// tool is one contender: prepare runs once, round once per timed run.
type tool struct {
	name    string
	runs    int
	round   func(ctx context.Context) error
	samples []time.Duration
}

// concurrency overrides opsbot's ssh.dial_concurrency and exec.concurrency.
var concurrency int

// sandboxed adds the rows of opsbot's commands in the hosts' sandbox
// (-sandbox).
var sandboxed bool

// inSandbox are the options of a command no person approved.
var inSandbox = hosts.Options{Sandbox: &hosts.Sandbox{}, Hidden: policy.DefaultSecretPaths}

// wanted says whether the tool named name is run.
func wanted(name, only, skip string) bool {
	return strings.Contains(name, only) && (skip == "" || !strings.Contains(name, skip))
}

func run(n, runs int, only, skip string) error {
	for bin, name := range map[string]string{"parallel-ssh": "parallel-ssh", "ansible": "ansible", "ssh": "ssh ControlMaster"} {
		if _, err := exec.LookPath(bin); err != nil && (bin == "ssh" || wanted(name, only, skip)) {
			return fmt.Errorf("%s not found: apt-get install -y pssh ansible openssh-client", bin)
		}
	}
	dir, err := os.MkdirTemp("", "opsbot-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	f, err := newFleet(dir, n)
	if err != nil {
		return err
	}
	defer f.srv.Stop()
	ctx := context.Background()
	tools, cleanup, err := f.tools(ctx, runs)
	defer cleanup()
	if err != nil {
		return err
	}
	tools = slices.DeleteFunc(tools, func(t *tool) bool { return !wanted(t.name, only, skip) })
	fmt.Fprintf(os.Stderr, "fleet: %d hosts (%s …) on %d sshd processes; %d runs per tool\n", n, f.srv.Addrs[0], len(f.srv.Servers), runs)
	for i := 0; ; i++ {
		ran := false
		for _, t := range tools {
			if i >= t.runs {
				continue
			}
			ran = true
			start := time.Now()
			if err := t.round(ctx); err != nil {
				return fmt.Errorf("%s: %w", t.name, err)
			}
			t.samples = append(t.samples, time.Since(start))
			fmt.Fprintf(os.Stderr, "  %-28s run %d: %v\n", t.name, i+1, t.samples[i].Round(time.Millisecond))
		}
		if !ran {
			break
		}
	}
	report(tools, n)
	return nil
}

// fleet is the sshd and the files every tool reads.
type fleet struct {
	srv      *sshtest.Fleet
	dir      string
	sshCfg   string // OpenSSH client config
	hosts    []hosts.Host
	cfg      hosts.Config
	warmPool *hosts.Pool
}

func newFleet(dir string, n int) (*fleet, error) {
	var addrs []string
	for i := range n {
		addrs = append(addrs, fmt.Sprintf("127.0.%d.%d", (i+2)/256, (i+2)%256))
	}
	srv, err := sshtest.NewFleet(dir, addrs, sshtest.Options{})
	if err != nil {
		return nil, err
	}
	f := &fleet{srv: srv, dir: dir, sshCfg: filepath.Join(dir, "ssh_config")}
	for i, a := range srv.Addrs {
		f.hosts = append(f.hosts, hosts.Host{Name: fmt.Sprintf("h%03d", i+1), Address: a})
	}
	f.cfg = hosts.Config{
		// A minute to connect, as parallel-ssh gets -t 120: a loaded
		// machine must slow a round down, not fail it.
		SSH: hosts.SSHConfig{KnownHosts: srv.KnownHosts, IdentityFiles: []string{srv.IdentityFile}, User: srv.User, DialConcurrency: concurrency,
			ConnectTimeout: time.Minute},
		Exec: hosts.ExecConfig{Concurrency: concurrency},
	}
	return f, f.writeFiles()
}

// writeFiles writes the OpenSSH client config, pssh's host list and
// Ansible's inventory and config. Host keys are checked by every tool.
func (f *fleet) writeFiles() error {
	sshCfg := fmt.Sprintf(`Host *
  User %s
  IdentityFile %s
  IdentitiesOnly yes
  UserKnownHostsFile %s
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  BatchMode yes
  LogLevel ERROR
`, f.srv.User, f.srv.IdentityFile, f.srv.KnownHosts)
	var psshHosts, inventory strings.Builder
	inventory.WriteString("[fleet]\n")
	for _, h := range f.hosts {
		ip, port := splitAddr(h.Address)
		fmt.Fprintf(&psshHosts, "%s:%s\n", ip, port)
		fmt.Fprintf(&inventory, "%s ansible_host=%s ansible_port=%s\n", h.Name, ip, port)
	}
	files := map[string]string{
		"ssh_config":    sshCfg,
		"pssh_hosts":    psshHosts.String(),
		"inventory.ini": inventory.String(),
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(f.dir, name), []byte(body), 0o600); err != nil {
			return err
		}
	}
	return nil
}

func splitAddr(a string) (string, string) {
	i := strings.LastIndexByte(a, ':')
	return a[:i], a[i+1:]
}

// tools prepares every contender; cleanup closes masters and pools.
func (f *fleet) tools(ctx context.Context, runs int) ([]*tool, func(), error) {
	var err error
	if f.warmPool, err = hosts.NewPool(f.cfg); err != nil {
		return nil, func() {}, err
	}
	masters := filepath.Join(f.dir, "masters")
	cleanup := func() {
		_ = f.warmPool.Close()
		f.stopMasters(masters)
	}
	if err := f.opsbotRound(ctx, f.warmPool, hosts.Options{}); err != nil { // warm it up
		return nil, cleanup, fmt.Errorf("opsbot warm-up: %w", err)
	}
	if err := f.startMasters(ctx, masters); err != nil {
		return nil, cleanup, err
	}
	tools := []*tool{
		{name: "opsbot cold (new pool)", runs: runs, round: func(ctx context.Context) error { return f.opsbotCold(ctx, hosts.Options{}) }},
		{name: "parallel-ssh -p 32", runs: runs, round: f.pssh},
		{name: "ansible -f 100", runs: min(runs, 3), round: f.ansible},
		{name: "opsbot warm (pooled)", runs: runs, round: func(ctx context.Context) error { return f.opsbotRound(ctx, f.warmPool, hosts.Options{}) }},
		{name: "ssh ControlMaster (warm)", runs: runs, round: func(ctx context.Context) error { return f.controlMaster(ctx, masters) }},
	}
	if !sandboxed {
		return tools, cleanup, nil
	}
	if err := f.opsbotRound(ctx, f.warmPool, inSandbox); err != nil { // probe every host
		return nil, cleanup, fmt.Errorf("opsbot sandboxed warm-up: %w", err)
	}
	return append(tools,
		&tool{name: "opsbot cold sandboxed", runs: runs, round: func(ctx context.Context) error { return f.opsbotCold(ctx, inSandbox) }},
		&tool{name: "opsbot warm sandboxed", runs: runs, round: func(ctx context.Context) error { return f.opsbotRound(ctx, f.warmPool, inSandbox) }},
	), cleanup, nil
}

// opsbotCold dials every host afresh.
func (f *fleet) opsbotCold(ctx context.Context, opts hosts.Options) error {
	p, err := hosts.NewPool(f.cfg)
	if err != nil {
		return err
	}
	defer p.Close()
	return f.opsbotRound(ctx, p, opts)
}

// opsbotRound runs uptime on every host with the default fan-out limit.
func (f *fleet) opsbotRound(ctx context.Context, p *hosts.Pool, opts hosts.Options) error {
	var failed []string
	for _, r := range hosts.RunMany(ctx, p, f.hosts, "uptime", opts, hosts.FanOut{Limit: f.cfg.Exec.Concurrency}) {
		if r.Err != nil || !r.Result.OK() || !strings.Contains(string(r.Result.Output), "load average") {
			failed = append(failed, fmt.Sprintf("%s: %v %s", r.Host.Name, r.Err, r.Result.Output))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d hosts failed, first: %s", len(failed), failed[0])
	}
	return nil
}

func (f *fleet) pssh(ctx context.Context) error {
	out, err := exec.CommandContext(ctx, "parallel-ssh", "-p", "32", "-t", "120",
		"-h", filepath.Join(f.dir, "pssh_hosts"), "-x", "-F "+f.sshCfg, "uptime").CombinedOutput()
	if err != nil || strings.Count(string(out), "[SUCCESS]") != len(f.hosts) {
		return fmt.Errorf("%v: %s", err, tail(out))
	}
	return nil
}

// ansible runs the ad-hoc command cold: a fresh ControlPath directory, so
// no ControlPersist master survives from the previous run.
func (f *fleet) ansible(ctx context.Context) error {
	ctlDir, err := os.MkdirTemp(f.dir, "ansible-cp-")
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "ansible", "all", "-i", filepath.Join(f.dir, "inventory.ini"),
		"-m", "command", "-a", "uptime", "-f", "100")
	cmd.Env = append(os.Environ(),
		"ANSIBLE_SSH_COMMON_ARGS=-F "+f.sshCfg,
		"ANSIBLE_SSH_CONTROL_PATH_DIR="+ctlDir,
		"ANSIBLE_PYTHON_INTERPRETER=/usr/bin/python3",
		"ANSIBLE_HOST_KEY_CHECKING=True",
		"ANSIBLE_LOCAL_TEMP="+filepath.Join(f.dir, "ansible-tmp"),
	)
	out, err := cmd.CombinedOutput()
	f.stopMasters(ctlDir) // ControlPersist masters would otherwise linger
	if err != nil || strings.Count(string(out), "| CHANGED |") != len(f.hosts) {
		return fmt.Errorf("%v: %s", err, tail(out))
	}
	return nil
}

// startMasters opens one OpenSSH ControlMaster per host.
func (f *fleet) startMasters(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return forAll(ctx, f.hosts, 32, func(h hosts.Host) error {
		ip, port := splitAddr(h.Address)
		out, err := exec.CommandContext(ctx, "ssh", "-F", f.sshCfg, "-p", port, "-o", "ControlMaster=yes",
			"-o", "ControlPath="+filepath.Join(dir, "%C"), "-o", "ControlPersist=yes", "-fN", ip).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ssh master for %s: %v: %s", h.Address, err, out)
		}
		return nil
	})
}

// stopMasters asks every master under dir to exit.
func (f *fleet) stopMasters(dir string) {
	socks, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, s := range socks {
		_ = exec.Command("ssh", "-F", f.sshCfg, "-o", "ControlPath="+s, "-O", "exit", "x").Run()
	}
}

// controlMaster runs uptime on every host at once over the masters.
func (f *fleet) controlMaster(ctx context.Context, dir string) error {
	return forAll(ctx, f.hosts, len(f.hosts), func(h hosts.Host) error {
		ip, port := splitAddr(h.Address)
		out, err := exec.CommandContext(ctx, "ssh", "-F", f.sshCfg, "-p", port, "-o", "ControlMaster=no",
			"-o", "ControlPath="+filepath.Join(dir, "%C"), ip, "uptime").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "load average") {
			return fmt.Errorf("%s: %v: %s", h.Address, err, out)
		}
		return nil
	})
}

// forAll runs fn on every host, limit at a time, and returns the first
// error.
func forAll(ctx context.Context, list []hosts.Host, limit int, fn func(hosts.Host) error) error {
	r := hosts.RunnerFunc(func(_ context.Context, h hosts.Host, _ string, _ hosts.Options, _ func(hosts.Chunk)) (hosts.Result, error) {
		return hosts.Result{Host: h.Name}, fn(h)
	})
	for _, res := range hosts.RunMany(ctx, r, list, "", hosts.Options{}, hosts.FanOut{Limit: limit}) {
		if res.Err != nil {
			return res.Err
		}
	}
	return nil
}

func tail(b []byte) string {
	s := strings.TrimSpace(string(b))
	return s[max(0, len(s)-2000):]
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// report prints the Markdown table for docs/BENCHMARKS.md.
func report(tools []*tool, n int) {
	med := map[string]time.Duration{}
	fmt.Printf("\n`uptime` on %d loopback hosts, median of the runs:\n\n", n)
	fmt.Println("| tool | runs | median | min | max |")
	fmt.Println("|---|---:|---:|---:|---:|")
	for _, t := range tools {
		med[t.name] = median(t.samples)
		fmt.Printf("| %s | %d | %s | %s | %s |\n", t.name, len(t.samples), ms(med[t.name]), ms(slices.Min(t.samples)), ms(slices.Max(t.samples)))
	}
	fmt.Println()
	fmt.Println("| ratio | measured | target |")
	fmt.Println("|---|---:|---:|")
	for _, r := range []struct{ a, b, target string }{
		{"opsbot cold (new pool)", "parallel-ssh -p 32", "≤ 0.25×"},
		{"opsbot cold (new pool)", "ansible -f 100", "≤ 0.1×"},
		{"opsbot warm (pooled)", "ssh ControlMaster (warm)", "≤ 0.5×"},
		{"opsbot cold sandboxed", "parallel-ssh -p 32", "≤ 0.25×"},
		{"opsbot warm sandboxed", "ssh ControlMaster (warm)", "≤ 0.5×"},
		{"opsbot cold sandboxed", "opsbot cold (new pool)", ""},
		{"opsbot warm sandboxed", "opsbot warm (pooled)", ""},
	} {
		if med[r.a] > 0 && med[r.b] > 0 {
			fmt.Printf("| %s / %s | %.3f× | %s |\n", strings.TrimSuffix(strings.TrimSuffix(r.a, " (new pool)"), " (pooled)"), r.b, float64(med[r.a])/float64(med[r.b]), r.target)
		}
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
