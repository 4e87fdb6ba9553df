package hosts_test

import (
	"testing"
	"time"

	"github.com/opsbot/opsbot/hosts"
)

// BenchmarkSandboxedTrue measures `true` on the local host with and
// without the sandbox, interleaved in every iteration so that load
// elsewhere hits both alike, and reports medians: plain-ms is Local.Run as
// an approved command runs, sandboxed-ms as one the policy allowed runs
// (re-exec of this binary as the launcher, the Landlock ruleset, the
// private directory made and removed), overhead-ms the median of
// per-iteration differences. The launcher here is the test binary; opsbot
// itself starts a little slower (more packages to initialise).
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
	var plain, boxed, over []time.Duration
	for b.Loop() {
		p, s := run(nil), run(&hosts.Sandbox{})
		plain, boxed, over = append(plain, p), append(boxed, s), append(over, s-p)
	}
	ms := func(d []time.Duration) float64 { return float64(medianOf(d)) / float64(time.Millisecond) }
	b.ReportMetric(ms(plain), "plain-ms")
	b.ReportMetric(ms(boxed), "sandboxed-ms")
	b.ReportMetric(ms(over), "overhead-ms")
}
