package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/opsbot/opsbot/hosts"
)

// serve starts an n-host fleet in dir and keeps it until SIGINT or
// SIGTERM, for timing whole processes against it: dir/opsbot.yaml is a
// config `opsbot hosts exec group:fleet -- uptime` runs with (its store in dir),
// and `bench -raw dir` is the raw x/crypto/ssh reference over the same
// hosts.
func serve(dir string, n int) error {
	f, err := newFleet(dir, n)
	if err != nil {
		return err
	}
	defer f.srv.Stop()
	var b strings.Builder
	fmt.Fprintf(&b, "store:\n  path: %s\nssh:\n  known_hosts: %s\n  identity_files: [%s]\n  user: %s\n  connect_timeout: 60s\nhosts:\n",
		filepath.Join(dir, "opsbot.db"), f.srv.KnownHosts, f.srv.IdentityFile, f.srv.User)
	var list strings.Builder
	for _, h := range f.hosts {
		fmt.Fprintf(&b, "  - name: %s\n    address: %s\n    groups: [fleet]\n", h.Name, h.Address)
		fmt.Fprintln(&list, h.Address)
	}
	files := map[string]string{"opsbot.yaml": b.String(), "raw_hosts": list.String(),
		"raw_env": fmt.Sprintf("%s\n%s\n%s\n", f.srv.User, f.srv.IdentityFile, f.srv.KnownHosts)}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "fleet: %d hosts on %d sshd processes; config %s; stop with SIGINT\n", n, len(f.srv.Servers), filepath.Join(dir, "opsbot.yaml"))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return nil
}

// rawWrapped is the line opsbot sends for `uptime` (hosts' wrapLine, with
// a fixed token and the 60 s default deadline), so that the raw client's
// hosts do the same work (timeout(1), a second bash).
const rawWrapped = `echo opsbot-pid:bench:$$ >&2; command -v bash >/dev/null 2>&1 || { echo 'opsbot: bash is required' >&2; exit 126; }; ` +
	`exec env -u BASH_ENV -u ENV -u SHELLOPTS -u BASHOPTS -u POSIXLY_CORRECT 'GIT_OPTIONAL_LOCKS=0' timeout -k 5s 60s bash -c 'uptime' 'opsbot-run-bench'`

// rawClientConfig is the client config of the -serve fleet in dir, and
// its hosts' addresses.
func rawClientConfig(dir string) (*ssh.ClientConfig, []string, error) {
	env, err := os.ReadFile(filepath.Join(dir, "raw_env"))
	if err != nil {
		return nil, nil, err
	}
	list, err := os.ReadFile(filepath.Join(dir, "raw_hosts"))
	if err != nil {
		return nil, nil, err
	}
	parts := strings.Fields(string(env))
	key, err := os.ReadFile(parts[1])
	if err != nil {
		return nil, nil, err
	}
	signer, err := ssh.ParsePrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	check, err := knownhosts.New(parts[2])
	if err != nil {
		return nil, nil, err
	}
	cfg := &ssh.ClientConfig{User: parts[0], Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)}, HostKeyCallback: check, Timeout: time.Minute}
	return cfg, strings.Fields(string(list)), nil
}

// rawWarm is the warm reference for the bot's fan-out: bare
// golang.org/x/crypto/ssh with a client per host dialled once, then
// rounds rounds of one session a host sending the line in lineFile (the
// exact line opsbot sent in a warm round, captured), 64 hosts at a time;
// it prints each round's time and their median.
func rawWarm(dir, lineFile string, rounds int) error {
	if lineFile == "" {
		return fmt.Errorf("-raw-warm needs -line FILE: the line opsbot sends, captured from a run (docs/BENCHMARKS.md)")
	}
	line, err := os.ReadFile(lineFile)
	if err != nil {
		return fmt.Errorf("-line %s: cannot read it: %w", lineFile, err)
	}
	cfg, addrs, err := rawClientConfig(dir)
	if err != nil {
		return err
	}
	clients := make(map[string]*ssh.Client, len(addrs))
	var mu sync.Mutex
	var hs []hosts.Host
	for _, a := range addrs {
		hs = append(hs, hosts.Host{Name: a, Address: a})
	}
	ctx := context.Background()
	if err := forAll(ctx, hs, hosts.DefaultConcurrency, func(h hosts.Host) error {
		cl, err := ssh.Dial("tcp", h.Address, cfg)
		if err != nil {
			return err
		}
		mu.Lock()
		clients[h.Address] = cl
		mu.Unlock()
		return nil
	}); err != nil {
		return err
	}
	var took []time.Duration
	for range rounds {
		start := time.Now()
		if err := forAll(ctx, hs, hosts.DefaultConcurrency, func(h hosts.Host) error {
			sess, err := clients[h.Address].NewSession()
			if err != nil {
				return err
			}
			defer sess.Close()
			out, err := sess.CombinedOutput(string(line))
			if err != nil || !strings.Contains(string(out), "load average") {
				return fmt.Errorf("%s: %v: %s", h.Address, err, out)
			}
			return nil
		}); err != nil {
			return err
		}
		took = append(took, time.Since(start))
		fmt.Printf("raw warm round: %.2f s\n", time.Since(start).Seconds())
	}
	slices.Sort(took)
	fmt.Printf("raw warm, %d hosts, median of %d rounds: %.2f s\n", len(hs), rounds, took[len(took)/2].Seconds())
	return nil
}

// raw is the reference a whole `opsbot hosts exec` is timed against: bare
// golang.org/x/crypto/ssh over the hosts of a `-serve` fleet, cold (a
// client per host, closed after its command), the same wrapper, 64 hosts
// at a time, host keys checked against the fleet's known_hosts. Each
// host's output is printed prefixed with its address, as opsbot prints it.
func raw(dir string) error {
	cfg, addrs, err := rawClientConfig(dir)
	if err != nil {
		return err
	}
	var hs []hosts.Host
	for _, a := range addrs {
		hs = append(hs, hosts.Host{Name: a, Address: a})
	}
	return forAll(context.Background(), hs, hosts.DefaultConcurrency, func(h hosts.Host) error {
		out, err := rawRun(cfg, h.Address)
		if err != nil {
			return err
		}
		fmt.Printf("%s: %s", h.Address, out)
		return nil
	})
}

// rawRun dials addr, runs the wrapped uptime on one session and closes.
func rawRun(cfg *ssh.ClientConfig, addr string) ([]byte, error) {
	cl, err := ssh.Dial("tcp", addr, cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", addr, err)
	}
	defer cl.Close()
	sess, err := cl.NewSession()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", addr, err)
	}
	defer sess.Close()
	out, err := sess.Output(rawWrapped)
	if err != nil || !strings.Contains(string(out), "load average") {
		return nil, fmt.Errorf("%s: %v: %s", addr, err, out)
	}
	return out, nil
}
