package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/testfake"
	"github.com/opsbot/opsbot/agent/tools"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/hosts"
)

// diagnostics are six commands and what each prints: about 1 KB each, a
// marker at the head and one at the tail.
func diagnostics() ([]string, map[string]string) {
	cmds := []string{"uptime", "df -h", "free -m", "ss -s", "dmesg | tail -50", "journalctl -u nginx -n 50"}
	out := map[string]string{}
	for i, c := range cmds {
		out[c] = fmt.Sprintf("OUT%d-HEAD\n%sOUT%d-TAIL\n", i+1, strings.Repeat(fmt.Sprintf("line of output %d\n", i+1), 60), i+1)
	}
	return cmds, out
}

func investigator(p agent.Provider, h agent.History, ex hosts.Executor) *agent.Agent {
	guard := &approvals.Guard{Policy: riskyPolicy{risky: []string{"touch", "systemctl restart"}}, Approver: approver{}, Exec: ex}
	return &agent.Agent{Provider: p, History: h, Tools: agent.NewRegistry(&tools.RunCommand{Guard: guard})}
}

// An investigation of five parallel diagnostics and one follow-up: every
// result reaches the model whole, in the request that delivers it and in
// the last one, and the answer can quote the first and the sixth.
func TestInvestigationKeepsEveryResult(t *testing.T) {
	t.Parallel()
	eachWire(t, func(t *testing.T, w wire) {
		cmds, outs := diagnostics()
		var five []string
		for _, c := range cmds[:5] {
			five = append(five, "run_command", run("web-1", c))
		}
		f, p := w.modelReplies(t,
			testfake.Reply{Raw: w.sse(testfake.Use("c1", "Let me look at the basics.", five...)), Once: true},
			testfake.Reply{Raw: w.sse(testfake.Use("c2", "", "run_command", run("web-1", cmds[5]))), Once: true},
			w.reader(func(results []string) string {
				first, last := "", ""
				if len(results) == 6 {
					first, last = firstLine(results[0]), lastLine(results[5], "TAIL")
				}
				return fmt.Sprintf("Found: %s and %s.", first, last)
			}),
		)
		h, sess := sqliteSession(t)
		a := investigator(p, h, &fleet{outputs: outs})
		ev := &testfake.Recorder{}
		if err := a.Turn(context.Background(), sess, "why is web-1 slow?", ev.Emit); err != nil {
			t.Fatal(err)
		}
		reqs := f.Requests()
		if len(reqs) != 3 {
			t.Fatalf("%d requests; want 3", len(reqs))
		}
		for i, want := range []int{5, 6} {
			results := w.results(reqs[i+1].Body)
			whole := 0
			for j, r := range results {
				if strings.Contains(r, outs[cmds[j]]) {
					whole++
				}
			}
			if len(results) != want || whole != want {
				t.Errorf("request %d carries %d of %d results whole; want all %d", i+2, whole, len(results), want)
			}
		}
		if got := ev.Text(); !strings.Contains(got, "OUT1-HEAD") || !strings.Contains(got, "OUT6-TAIL") {
			t.Errorf("the answer does not quote outputs 1 and 6: %q", got)
		}
	})
}

func firstLine(s string) string {
	i := strings.Index(s, "OUT")
	if i < 0 {
		return "(nothing)"
	}
	line, _, _ := strings.Cut(s[i:], "\n")
	return line
}

func lastLine(s, marker string) string {
	i := strings.LastIndex(s, "OUT")
	if i < 0 || !strings.Contains(s[i:], marker) {
		return "(nothing)"
	}
	line, _, _ := strings.Cut(s[i:], "\n")
	return line
}
