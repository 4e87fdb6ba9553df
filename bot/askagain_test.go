package bot

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/store"
)

// finishedFollowUps is a followUpStore that records which follow-ups
// were finished; nothing else is asked of it here.
type finishedFollowUps struct {
	followUpStore
	finished []string
}

func (f *finishedFollowUps) FinishFollowUp(_ context.Context, id string) (bool, error) {
	f.finished = append(f.finished, id)
	return true, nil
}

// An approved MCP tool call that a restart kept from being made is told
// without an Ask again button: a chat `run` of "mcp:SERVER TOOL {…}"
// would ask for a command on a host that does not exist. A command keeps
// its button.
func TestApprovedCallNotMadeHasNoAskAgain(t *testing.T) {
	t.Parallel()
	conn := newFakeConn(slackLike)
	st := &finishedFollowUps{}
	fu := &followUps{store: st, out: &Platforms{conns: map[string]connectors.Connector{"fake": conn}}, log: slog.Default()}
	ev := connectors.Event{Platform: "fake", Channel: "C1", Thread: "T1"}
	approved := func(id, host, command string) approvals.Approval {
		return approvals.Approval{ID: id, Host: host, Command: command, State: approvals.ApprovalApproved, DecidedBy: "web:bob"}
	}
	fu.notRunAskAgain(t.Context(), ev, store.FollowUp{ApprovalID: "a1"}, approved("a1", "mcp:grafana", `create_annotation {"text":"deploy"}`))
	fu.notRunAskAgain(t.Context(), ev, store.FollowUp{ApprovalID: "a2"}, approved("a2", "web-1", "systemctl restart nginx"))
	msgs := conn.thread("T1")
	if len(msgs) != 2 {
		t.Fatalf("%d messages, want 2", len(msgs))
	}
	if m := msgs[0].msg; len(m.Buttons) != 0 || !strings.Contains(m.Text, "on the MCP server grafana") || !strings.Contains(m.Text, "not made") {
		t.Errorf("the MCP call's report: %q with %d buttons; want it named as an MCP call, with no button", m.Text, len(m.Buttons))
	}
	if m := msgs[1].msg; len(m.Buttons) != 1 || m.Buttons[0].ActionID != ActionAskAgain {
		t.Errorf("the command's report has buttons %+v, want Ask again", m.Buttons)
	}
	if len(st.finished) != 2 {
		t.Errorf("follow-ups finished: %v, want both", st.finished)
	}
}
