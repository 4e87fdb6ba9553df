package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/tools"
	"github.com/opsbot/opsbot/approvals"
)

func call(name, input string) agent.ToolCall {
	return agent.ToolCall{Name: name, Input: []byte(input), Emit: func(agent.Event) {}}
}

func TestTailFileIsCappedAndQuoted(t *testing.T) {
	t.Parallel()
	fl := &fleet{outputs: map[string]string{}}
	tool := &tools.TailFile{Guard: &approvals.Guard{Policy: riskyPolicy{}, Exec: fl}}
	tool.Call(context.Background(), call("tail_file", `{"target":"web-1","path":"/var/log/app log; rm -rf /","bytes":10000000}`))
	if got := fl.runs(); len(got) != 1 || got[0] != `web-1: tail -c 65536 -- '/var/log/app log; rm -rf /'` {
		t.Errorf("ran %q", got)
	}
}

func TestPolicyCheckDecidesWithoutRunning(t *testing.T) {
	t.Parallel()
	fl := &fleet{outputs: map[string]string{}}
	tool := &tools.PolicyCheck{Guard: &approvals.Guard{Policy: riskyPolicy{risky: []string{"systemctl restart"}}, Exec: fl}}
	res := tool.Call(context.Background(), call("policy_check", run("web-1", "systemctl restart nginx")))
	if !strings.Contains(res.Content, "waits for a person to approve it: changes the system") || len(fl.runs()) != 0 {
		t.Errorf("result %q, ran %q", res.Content, fl.runs())
	}
}
