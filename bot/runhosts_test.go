package bot

import (
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/hosts"
)

// A run on several hosts shows each host's result as soon as that host is
// done (issue 28 item 7): while one host is still held (frozen, until its
// deadline plus a keepalive's wait), the thread already reads the other's
// result and how many are done.
func TestRunShowsEachHostWhenItIsDone(t *testing.T) {
	t.Parallel()
	conn := newFakeConn(connectors.Limits{MaxText: 4000})
	rn, _ := newFakeRunner(conn)
	rn.timeout = time.Minute
	held := make(chan struct{})
	rn.exec = execFunc(func(names []string, opts hosts.ExecOptions) []hosts.ExecResult {
		first := hosts.ExecResult{Host: names[0], Duration: 120 * time.Millisecond}
		opts.OnResult(first)
		<-held
		second := hosts.ExecResult{Host: names[1], ExitCode: 2, Duration: time.Minute}
		opts.OnResult(second)
		return []hosts.ExecResult{first, second}
	}).Exec
	ended := make(chan struct{})
	ev := connectors.Event{Platform: "fake", Channel: "C1", Thread: "t"}
	go func() {
		defer close(ended)
		rn.command(t.Context(), ev, agent.SessionInfo{ID: 1}, "web-1,web-2 uptime")
	}()
	shows := func(want ...string) bool {
		for _, m := range conn.thread("t") {
			all := true
			for _, w := range want {
				all = all && strings.Contains(m.msg.Text+"\n"+m.msg.Context, w)
			}
			if all {
				return true
			}
		}
		return false
	}
	limit := time.NewTimer(2 * time.Minute) // a guard against a hang, not a pace
	defer limit.Stop()
	for {
		changed := conn.changes()
		if shows("web-1: ✓ exit 0 in 120ms", "1 of 2 hosts done") {
			break
		}
		select {
		case <-changed:
		case <-limit.C:
			close(held)
			t.Fatalf("web-1's result is not shown while web-2 runs:%v", conn.thread("t"))
		}
	}
	close(held)
	<-ended
	if !shows("web-1: ✓ exit 0", "web-2: ✗ exit 2", "2 hosts, 1 failed — web-2: exit 2") {
		t.Errorf("the run ended showing:%v", conn.thread("t")[0].msg)
	}
}
