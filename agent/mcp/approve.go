package mcp

import (
	"context"
	"fmt"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
)

// Host is the approval request's host for a server's calls: "mcp:NAME".
// Approver rules may name it (approvals.approvers[].hosts).
func Host(server string) string { return "mcp:" + server }

// Command is the approval request's command for a call: the tool's name
// and its canonical arguments. With Host it is what the approval binds
// (approvals.Request.Hash), with the requester.
func Command(toolName string, args []byte) string { return toolName + " " + string(args) }

// approve asks people about a call, as the shell tools ask about a
// command: the request is shown as the call's ApprovalPending event, the
// turn's clock stops meanwhile, one card at a time. It returns the
// approval the call claimed, or the refusal the model reads.
func (t *tool) approve(ctx context.Context, call agent.ToolCall, args []byte, v Verdict) (string, *agent.ToolResult) {
	opt := &t.servers.opt
	if opt.Approver == nil {
		return "", refusal("not called: it needs approval, and no one can approve here (" + v.Reason + ")")
	}
	done := agent.WaitingForPeople(ctx)
	defer done()
	release, err := agent.OneCardAtATime(ctx)
	if err != nil {
		return "", refusal("not called: stopped while it waited to ask for approval")
	}
	defer release()
	host := Host(t.srv.name)
	req := approvals.CommandRequest{Target: host, Hosts: []string{host}, Command: Command(t.mcpName, args),
		Reasons:   []string{v.Reason, "the server's hints (shown, not used to decide): " + hints(t.def)},
		Requester: approvals.Person{Platform: call.Session.Platform, ID: call.Session.Requester}, Channel: call.Session.Channel, SessionID: call.Session.ID}
	out, err := opt.Approver.Approve(ctx, req, func(p approvals.Pending) {
		call.Emit(agent.Event{Kind: agent.ApprovalPending, Tool: call.Name, ToolID: call.ID, Approval: &agent.PendingApproval{ID: p.ID,
			Target: p.Target, Command: p.Command, Reasons: p.Reasons, Requester: p.Requester, ExpiresAt: p.ExpiresAt, Reattached: p.Reattached}})
	})
	switch {
	case err != nil && ctx.Err() != nil:
		return "", refusal("not called: stopped while it waited for approval")
	case err != nil:
		opt.Log.Error("ask approval of an MCP call", "server", t.srv.name, "tool", t.mcpName, "err", err)
		return "", refusal("not called: the approval request could not be recorded")
	case !out.Approved:
		who := ""
		if out.DecidedBy != "" {
			who = " by " + out.DecidedBy
		}
		return "", refusal(fmt.Sprintf("not called: the approval request was %s%s", out.State, who))
	}
	call.Emit(agent.Event{Kind: agent.ToolStarted, Tool: call.Name, ToolID: call.ID,
		Summary: fmt.Sprintf("approved: calling %s on MCP server %s…", t.mcpName, t.srv.name)})
	return out.Approval, nil
}

func refusal(msg string) *agent.ToolResult {
	return &agent.ToolResult{Content: msg, IsError: true, Summary: msg}
}
