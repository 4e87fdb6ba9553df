package hosts_test

import (
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
