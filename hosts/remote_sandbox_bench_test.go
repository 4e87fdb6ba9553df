package hosts_test

import (
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/sshtest"
	"github.com/opsbot/opsbot/policy"
)

// BenchmarkPerCommandSandboxed is what the SSH host's sandbox costs one
// command on a warm connection: Pool.Run("true") plain (approved) and
// inside bubblewrap with the default secret paths masked (unapproved),
// interleaved in every iteration, medians reported, and the median of the
// per-iteration differences.
func BenchmarkPerCommandSandboxed(b *testing.B) {
	srv := sshtest.Start(b, sshtest.Options{})
	p, err := hosts.NewPool(hosts.Config{SSH: hosts.SSHConfig{KnownHosts: srv.KnownHosts, IdentityFiles: []string{srv.IdentityFile}, User: srv.User}})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	h := hosts.Host{Name: "bench", Address: srv.Addr()}
	boxed := hosts.Options{Sandbox: &hosts.Sandbox{}, Hidden: policy.DefaultSecretPaths}
	for _, o := range []hosts.Options{{}, boxed} { // dial and probe outside the loop
		if _, err := p.Run(bg, h, "true", o, nil); err != nil {
			b.Fatal(err)
		}
	}
	var plain, sandboxed, over []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if res, err := p.Run(bg, h, "true", hosts.Options{}, nil); err != nil || !res.OK() {
			b.Fatal(res, err)
		}
		t1 := time.Now()
		if res, err := p.Run(bg, h, "true", boxed, nil); err != nil || !res.OK() {
			b.Fatal(res, err)
		}
		t2 := time.Now()
		plain, sandboxed, over = append(plain, t1.Sub(t0)), append(sandboxed, t2.Sub(t1)), append(over, t2.Sub(t1)-t1.Sub(t0))
	}
	for _, m := range []struct {
		name string
		d    []time.Duration
	}{{"plain-ms", plain}, {"sandboxed-ms", sandboxed}, {"sandbox-over-plain-ms", over}} {
		b.ReportMetric(float64(medianOf(m.d))/float64(time.Millisecond), m.name)
	}
}

// BenchmarkSandboxScan is what the scan for bare-name secrets adds to an
// unapproved command on a warm connection: each command run in bubblewrap
// with the default secret paths (scanned) and with the same list less its
// bare names (no scan), interleaved, medians reported. uptime and df -P /
// read no contents, so they should add nothing; grep -r scans a small
// tree.
func BenchmarkSandboxScan(b *testing.B) {
	srv := sshtest.Start(b, sshtest.Options{})
	p, err := hosts.NewPool(hosts.Config{SSH: hosts.SSHConfig{KnownHosts: srv.KnownHosts, IdentityFiles: []string{srv.IdentityFile}, User: srv.User}})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	h := hosts.Host{Name: "bench", Address: srv.Addr()}
	dir := bareSecretTree(b)
	var named []string
	for _, e := range policy.DefaultSecretPaths {
		if strings.Contains(e, "/") {
			named = append(named, e)
		}
	}
	scan := hosts.Options{Sandbox: &hosts.Sandbox{}, Hidden: policy.DefaultSecretPaths, Dir: dir}
	noScan := hosts.Options{Sandbox: &hosts.Sandbox{}, Hidden: named, Dir: dir}
	for _, cmd := range []string{"uptime", "df -P /", "grep -r x app"} {
		b.Run(cmd, func(b *testing.B) {
			if _, err := p.Run(bg, h, cmd, scan, nil); err != nil { // dial and probe outside the loop
				b.Fatal(err)
			}
			var with, without, over []time.Duration
			for b.Loop() {
				t0 := time.Now()
				if _, err := p.Run(bg, h, cmd, noScan, nil); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if _, err := p.Run(bg, h, cmd, scan, nil); err != nil {
					b.Fatal(err)
				}
				t2 := time.Now()
				without, with, over = append(without, t1.Sub(t0)), append(with, t2.Sub(t1)), append(over, t2.Sub(t1)-t1.Sub(t0))
			}
			b.ReportMetric(float64(medianOf(without))/float64(time.Millisecond), "noscan-ms")
			b.ReportMetric(float64(medianOf(with))/float64(time.Millisecond), "scan-ms")
			b.ReportMetric(float64(medianOf(over))/float64(time.Millisecond), "scan-over-noscan-ms")
		})
	}
}
