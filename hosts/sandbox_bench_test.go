package hosts_test

import (
	"testing"
	"time"

	"github.com/opsbot/opsbot/hosts"
)

// benchSecrets are secret path entries of every kind the policy has
// (absolute, globbed, ~/, bare names), a quarter of approvals'
// DefaultSecretPaths, for the cost of looking them up and masking those
// that exist.
var benchSecrets = []string{
	"/etc/shadow", "/etc/gshadow", "/etc/ssh/ssh_host_*_key", "/etc/ssl/private", "/etc/kubernetes/pki",
	"/proc/*/environ", "/proc/kcore", "/var/lib/docker/containers/*/config.v2.json",
	"~/.aws", "~/.kube", "~/.docker/config.json", "~/.netrc", "~/.ssh/*_key",
	"id_rsa", "id_ed25519", "*.key", "*.p12", ".bash_history", "*_history", "opsbot.db*",
}

// BenchmarkSandboxedTrue measures `true` on the local host with and
// without the sandbox, interleaved in every iteration so that load
// elsewhere hits both alike, and reports medians: plain-ms is Local.Run as
// an approved command runs, sandboxed-ms as one the policy allowed runs
// (re-exec of this binary as the launcher, its mount namespace made
// read-only, capabilities, the Landlock ruleset and the seccomp filter,
// the private directory made and removed), secrets-ms the same with
// benchSecrets to mask, overhead-ms the median of per-iteration
// differences between sandboxed and plain. The launcher here is the test
// binary; opsbot itself starts a little slower (more packages to
// initialise).
func BenchmarkSandboxedTrue(b *testing.B) {
	if err := hosts.SandboxSupport(); err != nil {
		b.Fatalf("no sandbox on this kernel: %v", err)
	}
	l := &hosts.Local{SandboxDir: b.TempDir()}
	run := func(sb *hosts.Sandbox) time.Duration {
		start := time.Now()
		res, err := l.Run(bg, localHost, "true", hosts.Options{Sandbox: sb}, nil)
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("%v, exit %d, output %q", err, res.ExitCode, res.Output)
		}
		return time.Since(start)
	}
	var plain, boxed, secrets, over []time.Duration
	for b.Loop() {
		p, s, h := run(nil), run(&hosts.Sandbox{}), run(&hosts.Sandbox{Hidden: benchSecrets})
		plain, boxed, secrets, over = append(plain, p), append(boxed, s), append(secrets, h), append(over, s-p)
	}
	ms := func(d []time.Duration) float64 { return float64(medianOf(d)) / float64(time.Millisecond) }
	b.ReportMetric(ms(plain), "plain-ms")
	b.ReportMetric(ms(boxed), "sandboxed-ms")
	b.ReportMetric(ms(secrets), "secrets-ms")
	b.ReportMetric(ms(over), "overhead-ms")
}
