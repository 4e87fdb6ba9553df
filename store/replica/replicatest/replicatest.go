// Package replicatest runs the pieces of a replicated opsbot for tests:
// the pinned litestream binary, and a sidecar as the chart runs it.
package replicatest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// T is what the helpers need of a test (*testing.T satisfies it): the
// package is not a test file, so it does not link the testing package
// into whatever imports it.
type T interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// Binary is $OPSBOT_LITESTREAM: the pinned litestream `make test` builds
// once per machine.
func Binary(t T) string {
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

// Sidecar starts `litestream replicate` with only a control socket in
// dir, as the chart's sidecar runs, and returns once the socket listens.
// The test's end kills it; so may the test, to kill a whole pod.
func Sidecar(t T, dir string) (socket string, cmd *exec.Cmd) {
	t.Helper()
	socket = filepath.Join(dir, "ls.sock")
	cfg := filepath.Join(dir, "litestream.yml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, "socket:\n  enabled: true\n  path: %s\ndbs: []\n", socket), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(Binary(t), "replicate", "-config", cfg)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
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
	return socket, cmd
}
