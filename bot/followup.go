package bot

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/executor"
	"github.com/opsbot/opsbot/policy"
	"github.com/opsbot/opsbot/store"
)

// A decided approval always leads to the command running once, or to a
// message in the thread saying why not. The turn that asked usually waits
// for the decision and acts on it; when a restart came in between, nobody
// waits, and the follow-up recorded with the request (store.FollowUp) is
// acted on here: on the vote that decides it, and by a sweep after expiries
// and at start-up. Each follow-up is done once (store.FinishFollowUp).

// followUps acts on decided approvals that no turn waits for: it runs
// what was approved, resumes the agent that asked, or says in the thread
// why not — once each.
type followUps struct {
	store followUpStore
	// session reads a session, the thread a decision is told in.
	session func(ctx context.Context, id int64) (store.Session, error)
	out     poster
	cards   approvalCards
	// expireDue expires overdue requests; nil when nobody can approve.
	expireDue func(ctx context.Context) (int, error)
	// policy judges an approved `run` again before it runs.
	policy approvals.HostPolicy
	// run runs a chat `run` approved while nobody waited, saying first how
	// it was decided (note).
	run func(ctx context.Context, ev connectors.Event, sess agent.SessionInfo, note string, hosts []string, spec runSpec)
	// resume continues the agent turn an approval cut off, reporting
	// whether there was one; settle tells the model a call it made was
	// not run. Both nil when no model is configured.
	resume  func(ctx context.Context, ev connectors.Event, sess agent.SessionInfo) bool
	settle  func(ctx context.Context, sess agent.SessionInfo, why string)
	enqueue func(id threadID, q queued) (behind, ok bool, full string)
	log     *slog.Logger
}

// followUpStore is what follow-ups read and close of decided requests.
type followUpStore interface {
	Approval(ctx context.Context, id string) (approvals.Approval, error)
	DecidedFollowUps(ctx context.Context) ([]store.FollowUp, error)
	FollowUpFor(ctx context.Context, approvalID string) (f store.FollowUp, ok bool, err error)
	ConsumeApproval(ctx context.Context, id, by string) (bool, error)
	FinishFollowUp(ctx context.Context, approvalID string) (won bool, err error)
}

var _ approvalCards = (*cards)(nil)

// now queues the follow-up of a decided approval in its thread. When the
// turn that asked still waits, it acts first and this finds the
// follow-up done.
func (fu *followUps) now(ctx context.Context, a approvals.Approval) {
	if a.SessionID == 0 {
		return
	}
	sess, err := fu.session(ctx, a.SessionID)
	if err != nil {
		fu.log.Warn("approval follow-up: session", "err", err)
		return
	}
	if _, ok := fu.out.conn(sess.Platform); !ok {
		return // its platform is not configured now; a later start acts on it
	}
	requester := displayName(a.Requester)
	ev := connectors.Event{Platform: sess.Platform, Workspace: sess.Workspace, Channel: sess.Channel, Thread: sess.Thread,
		User: connectors.User{ID: requester, Name: requester}}
	fu.enqueue(threadOf(ev), queued{ev: ev, followUp: a.ID})
}

// sweep queues every decided approval nobody acted on: expired while no
// turn waited, or decided just before a crash.
func (fu *followUps) sweep(ctx context.Context) {
	fs, err := fu.store.DecidedFollowUps(ctx)
	if err != nil {
		fu.log.Warn("approval follow-ups", "err", err)
		return
	}
	for _, f := range fs {
		a, err := fu.store.Approval(ctx, f.ApprovalID)
		if err != nil {
			continue
		}
		fu.now(ctx, a)
	}
}

// first acts on the thread's decided approvals that nothing acted on yet
// (a restart came between a decision and its follow-up) before a new
// message: the model's tool call an approval answers resumes, instead of
// the new message superseding it unrun (issue 12: 2 of 2 such approvals
// were dropped).
func (fu *followUps) first(ctx context.Context, ev connectors.Event, sess agent.SessionInfo) {
	fs, err := fu.store.DecidedFollowUps(ctx)
	if err != nil {
		fu.log.Warn("approval follow-ups", "err", err)
		return
	}
	for _, f := range fs {
		if f.SessionID == sess.ID {
			fu.act(ctx, ev, sess, f.ApprovalID)
		}
	}
}

// expire expires overdue requests and acts on them.
func (fu *followUps) expire(ctx context.Context) {
	if fu.expireDue != nil {
		if _, err := fu.expireDue(ctx); err != nil {
			fu.log.Warn("expire approvals", "err", err)
		}
	}
	fu.sweep(ctx)
	fu.cards.refreshAll(ctx)
}

// act acts on a decided approval in its thread, unless the turn that
// asked did already.
func (fu *followUps) act(ctx context.Context, ev connectors.Event, sess agent.SessionInfo, id string) {
	f, ok, err := fu.store.FollowUpFor(ctx, id)
	if err != nil {
		internalError(ctx, fu.out, fu.log, ev, err)
		return
	}
	if !ok {
		// A request recorded before follow-ups were: only an agent turn
		// can have asked for it.
		if a, err := fu.store.Approval(ctx, id); err == nil && a.State == approvals.ApprovalApproved && fu.resume != nil {
			fu.resume(ctx, ev, sess)
		}
		return
	}
	if !f.DoneAt.IsZero() || f.State == approvals.ApprovalPending {
		return
	}
	fu.cards.refresh(ctx, ev)
	a, err := fu.store.Approval(ctx, id)
	if err != nil {
		internalError(ctx, fu.out, fu.log, ev, err)
		return
	}
	switch {
	case f.State != approvals.ApprovalApproved:
		if f.Kind == store.FollowUpAgent && fu.settle != nil {
			// The model reads the refusal with the next message.
			fu.settle(ctx, sess, "not run: the approval request was "+connectors.PlainMentions(decisionText(a)))
		}
		fu.notRun(ctx, ev, f, a, "")
	case f.Consumed:
		// A claimed approval's follow-up closes as its command starts;
		// one still open was cut by a crash before the command started.
		fu.notRunAskAgain(ctx, ev, f, a)
	case f.Kind == store.FollowUpRun:
		fu.runApproved(ctx, ev, sess, f, a)
	case fu.resume == nil:
		fu.notRun(ctx, ev, f, a, "the agent that asked for it is off now (no model is configured); to run it yourself, use `run`")
	case !fu.resume(ctx, ev, sess):
		fu.notRun(ctx, ev, f, a, "the conversation moved on before it was decided; ask again")
	}
}

// runApproved runs a chat `run` approved while nobody waited for it.
func (fu *followUps) runApproved(ctx context.Context, ev connectors.Event, sess agent.SessionInfo, f store.FollowUp, a approvals.Approval) {
	if a.Command != f.Command || a.Host != strings.Join(f.Hosts, ",") {
		fu.notRun(ctx, ev, f, a, "what was approved is not what was asked for")
		return
	}
	if why := fu.policyRefuses(f.Hosts, f.Command); why != "" {
		fu.notRun(ctx, ev, f, a, "the policy now refuses it: "+why)
		return
	}
	claimed, err := fu.store.ConsumeApproval(ctx, a.ID, a.Requester)
	if err != nil {
		internalError(ctx, fu.out, fu.log, ev, err)
		return
	}
	if !claimed {
		return // someone else acted on it
	}
	// Its follow-up closes as the command starts: the ledger records the
	// running command and closes it in one transaction (hosts/executor).
	ctx = executor.WithSession(ctx, a.SessionID)
	fu.run(ctx, ev, sess, capitalize(decisionText(a))+".", f.Hosts, runSpec{Target: f.Target, Command: f.Command,
		Timeout: f.Timeout, Background: f.Background, Confinement: hosts.Confinement{Approved: true, Approval: a.ID}})
}

// policyRefuses says why the policy denies command on one of hosts now, or
// "".
func (fu *followUps) policyRefuses(hosts []string, command string) string {
	if fu.policy == nil {
		return "no command policy is configured"
	}
	for _, h := range hosts {
		if d := fu.policy.Check(h, command); d.Action == policy.Deny {
			return strings.Join(d.Reasons, "; ")
		}
	}
	return ""
}

// notRun tells the thread, once, that a decided request's command did not
// run, and why.
func (fu *followUps) notRun(ctx context.Context, ev connectors.Event, f store.FollowUp, a approvals.Approval, why string) {
	if won, err := fu.store.FinishFollowUp(ctx, f.ApprovalID); err != nil || !won {
		return
	}
	text := fmt.Sprintf("Not run: `%s` on %s — %s", a.Command, a.Host, decisionText(a))
	if why != "" {
		text += ", but " + why
	}
	fu.out.reply(ctx, ev, text+".")
}

// decisionText says how a request was decided, for people: "approved by
// @bob", "denied by @bob", "expired: nobody decided within 15 minutes".
func decisionText(a approvals.Approval) string { return approvals.DecisionText(a, mention) }

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
