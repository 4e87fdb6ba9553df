package bot

import (
	"context"
	"fmt"
	"strings"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/store"
)

// ActionAskAgain is the button under an approved command a restart kept
// from running: its value is the request id, and a click asks for the
// same command again (a new request, through the policy, by the clicker).
const ActionAskAgain = "ask_again"

// mcpHostPrefix starts the host of an approval of an MCP tool call
// ("mcp:SERVER"; agent/mcp).
const mcpHostPrefix = "mcp:"

// notRunAskAgain tells the thread that an approved command never started
// because opsbot stopped first, with a button to ask again. It is said
// before the follow-up is closed: a crash in between says it twice rather
// than never.
func (fu *followUps) notRunAskAgain(ctx context.Context, ev connectors.Event, f store.FollowUp, a approvals.Approval) {
	text := fmt.Sprintf("⚠️ `%s` on %s — %s, but opsbot stopped before running it: not run.", a.Command, a.Host, decisionText(a))
	m := connectors.Message{Text: text, Buttons: []connectors.Button{{ActionID: ActionAskAgain, Value: a.ID, Label: "Ask again"}}}
	if server, ok := strings.CutPrefix(a.Host, mcpHostPrefix); ok {
		// An MCP tool call is the model's to make again: a chat `run`
		// cannot ask for it.
		m = connectors.Message{Text: fmt.Sprintf("⚠️ The call of `%s` on the MCP server %s — %s, but opsbot stopped before making it: not made. Ask again for it to be made.",
			a.Command, server, decisionText(a))}
	}
	if _, err := fu.out.post(ctx, destOf(ev), m); err != nil {
		fu.log.Warn("tell of an approved command not run", "err", err)
		return // the next start says it
	}
	fu.store.FinishFollowUp(ctx, f.ApprovalID)
}

// askAgain asks, as the clicker, for the command of a request again: a
// chat `run` of it, in the request's thread.
func (fu *followUps) askAgain(ctx context.Context, ev connectors.Event) {
	a, err := fu.store.Approval(ctx, ev.Value)
	if err != nil {
		respond(ctx, fu.out, ev, "That request is no longer on record; ask for the command again with `run`.")
		return
	}
	text := "run " + a.Host + " " + a.Command
	if f, ok, err := fu.store.FollowUpFor(ctx, a.ID); err == nil && ok && f.Kind == store.FollowUpRun {
		text = "run " + f.Target + " " + a.Command
		if f.Background {
			text = "run --bg " + f.Target + " " + a.Command
		}
	}
	again := connectors.Event{Kind: connectors.EventMessage, Platform: ev.Platform, Workspace: ev.Workspace, Channel: ev.Channel,
		Thread: ev.Thread, User: ev.User, Text: text, Mention: true}
	switch _, ok, full := fu.enqueue(threadOf(again), queued{ev: again}); {
	case full != "":
		respond(ctx, fu.out, ev, full)
	case !ok:
		respond(ctx, fu.out, ev, "opsbot is shutting down; ask again once it is back.")
	}
}
