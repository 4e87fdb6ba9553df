package hosts_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/hosts"
)

// TestFleetCapsCommandsPerHost: with exec.max_per_host 2, two commands
// that hold the local host leave a third waiting; given up, it says why
// and never started; once one ends, the next runs.
func TestFleetCapsCommandsPerHost(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f, err := hosts.NewFleet(hosts.Config{Exec: hosts.ExecConfig{MaxPerHost: 2}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	gate := filepath.Join(dir, "gate")
	started := make(chan struct{}, 2)
	ended := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := f.Run(context.Background(), localHost, "echo up; until [ -e "+gate+" ]; do sleep 0.01; done", hosts.Options{},
				func(hosts.Chunk) { started <- struct{}{} })
			ended <- err
		}()
	}
	<-started
	<-started
	if got := f.Running()["local"]; got != 2 {
		t.Errorf("Running()[local] = %d while two commands hold it; want 2", got)
	}
	gaveUp, cancel := context.WithCancel(context.Background())
	cancel()
	marker := filepath.Join(dir, "third-ran")
	_, err = f.Run(gaveUp, localHost, "touch "+marker, hosts.Options{}, nil)
	if err == nil || !strings.Contains(err.Error(), "2 commands already run on local (exec.max_per_host)") {
		t.Errorf("a third command while two hold the host: err = %v; want it to say the host is at exec.max_per_host", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the third command ran past the cap")
	}
	// The gate file ends both.
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-ended; err != nil {
			t.Errorf("a held command failed: %v", err)
		}
	}
	if _, err := f.Run(context.Background(), localHost, "touch "+marker, hosts.Options{}, nil); err != nil {
		t.Fatalf("after the others ended: %v", err)
	}
	if got := f.Running(); len(got) != 0 {
		t.Errorf("Running() = %v once every command ended; want none", got)
	}
}
