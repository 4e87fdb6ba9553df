package hosts_test

import (
	"io"
	"slices"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/sshtest"
)

// BenchmarkPerCommand measures one command on a warm connection three
// ways, interleaved in every iteration so that load elsewhere on the
// machine hits all three alike, and reports medians:
//
//   - raw-true: raw x/crypto/ssh, a new session running `true`, nothing else;
//   - raw-wrapped: the same with the exact line Pool.Run sends (the on-host
//     deadline wrapper: timeout(1) and sh -c around `true`);
//   - pool: hosts.Pool.Run("true").
//
// pool-over-wrapped (the median of per-iteration differences) is the pool's
// own cost: session slots, streaming, capture, result. pool-over-raw adds
// what the wrapper costs on the host.
func BenchmarkPerCommand(b *testing.B) {
	srv := sshtest.Start(b, sshtest.Options{})
	client := rawClient(b, srv)
	defer client.Close()
	p, err := hosts.NewPool(hosts.Config{SSH: hosts.SSHConfig{KnownHosts: srv.KnownHosts, IdentityFiles: []string{srv.IdentityFile}, User: srv.User}})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	h := hosts.Host{Name: "bench", Address: srv.Addr()}
	if _, err := p.Run(bg, h, "true", hosts.Options{}, nil); err != nil { // dial outside the loop
		b.Fatal(err)
	}
	wrapped := hosts.RemoteCommand("true", hosts.Options{Timeout: time.Minute}, "0123456789abcdef")
	var raw, wrap, pool, overWrap, overRaw []time.Duration
	for b.Loop() {
		t0 := time.Now()
		rawRun(b, client, "true")
		t1 := time.Now()
		rawRun(b, client, wrapped)
		t2 := time.Now()
		if res, err := p.Run(bg, h, "true", hosts.Options{}, nil); err != nil || !res.OK() {
			b.Fatal(res, err)
		}
		t3 := time.Now()
		raw, wrap, pool = append(raw, t1.Sub(t0)), append(wrap, t2.Sub(t1)), append(pool, t3.Sub(t2))
		overWrap, overRaw = append(overWrap, t3.Sub(t2)-t2.Sub(t1)), append(overRaw, t3.Sub(t2)-t1.Sub(t0))
	}
	for _, m := range []struct {
		name string
		d    []time.Duration
	}{{"raw-true-ms", raw}, {"raw-wrapped-ms", wrap}, {"pool-ms", pool}, {"pool-over-wrapped-ms", overWrap}, {"pool-over-raw-ms", overRaw}} {
		b.ReportMetric(float64(medianOf(m.d))/float64(time.Millisecond), m.name)
	}
}

func rawClient(b *testing.B, srv *sshtest.Server) *ssh.Client {
	cb, err := knownhosts.New(srv.KnownHosts)
	if err != nil {
		b.Fatal(err)
	}
	client, err := ssh.Dial("tcp", srv.Addr(), &ssh.ClientConfig{
		User: srv.User, Auth: []ssh.AuthMethod{ssh.PublicKeys(srv.Client)}, HostKeyCallback: cb,
	})
	if err != nil {
		b.Fatal(err)
	}
	return client
}

func rawRun(b *testing.B, client *ssh.Client, line string) {
	s, err := client.NewSession()
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	s.Stdout, s.Stderr = io.Discard, io.Discard
	if err := s.Run(line); err != nil {
		b.Fatal(err)
	}
}

func medianOf(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkLocalRun is one `true` through the local runner.
func BenchmarkLocalRun(b *testing.B) {
	l := &hosts.Local{}
	for b.Loop() {
		if res, err := l.Run(bg, localHost, "true", hosts.Options{}, nil); err != nil || !res.OK() {
			b.Fatal(res, err)
		}
	}
}

// BenchmarkCapture is the output cap's cost per byte of a long stream.
func BenchmarkCapture(b *testing.B) {
	chunk := make([]byte, 32<<10)
	b.SetBytes(int64(len(chunk)))
	w, _ := hosts.NewCapture(hosts.DefaultOutputLimit)
	for b.Loop() {
		w.Write(chunk)
	}
}
