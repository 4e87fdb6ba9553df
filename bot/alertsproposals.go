package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/store"
)

// AlertProposals is the approver of alert investigations: a command that
// needs people is never waited on. It is posted in the alert's thread as
// a proposal (what, where, why it needs a person, how to ask for it), and
// the turn is told at once that it was not run. The guard of the agent
// that investigates alerts has this approver, so nothing that needs
// approval can run in an alert turn.
type AlertProposals struct {
	platforms *Platforms
	desk      *AlertDesk

	mu    sync.Mutex
	bound map[int64]proposalPlace
}

type proposalPlace struct {
	id   groupID
	dest connectors.Dest
}

var _ approvals.Approver = (*AlertProposals)(nil)

// NewAlertProposals posts proposals through platforms.
func NewAlertProposals(platforms *Platforms) *AlertProposals {
	return &AlertProposals{platforms: platforms, bound: map[int64]proposalPlace{}}
}

// notRunState is the Outcome's state: the guard tells the model "not run:
// the approval request was " and this.
const notRunState = "set aside: an alert investigation is read-only, so it is posted in the thread as a proposal for a person to run; do not wait for it"

// Approve posts req as a proposal and answers at once that it did not
// run.
func (p *AlertProposals) Approve(ctx context.Context, req approvals.CommandRequest, _ func(approvals.Pending)) (approvals.Outcome, error) {
	p.mu.Lock()
	place, ok := p.bound[req.SessionID]
	p.mu.Unlock()
	if !ok {
		return approvals.Outcome{}, errors.New("this turn is no alert investigation, and only those ask here")
	}
	if _, err := p.platforms.post(context.WithoutCancel(ctx), place.dest, proposalMessage(req)); err != nil {
		p.platforms.log.Warn("post an alert investigation's proposal", "err", err)
	}
	if p.desk != nil {
		p.desk.update(context.WithoutCancel(ctx), place.id, func(_ *store.AlertGroup, st *groupState) {
			st.Investigation.Proposed = append(st.Investigation.Proposed, req.Command+" on "+strings.Join(req.Hosts, ","))
		})
	}
	return approvals.Outcome{Approved: false, State: notRunState}, nil
}

// proposalMessage is the proposal's card.
func proposalMessage(req approvals.CommandRequest) connectors.Message {
	target := req.Target
	if len(req.Hosts) > 0 {
		target = strings.Join(req.Hosts, ", ")
	}
	text := fmt.Sprintf("💡 **Proposed, not run** (an alert investigation is read-only)\n```\n%s\n```\non `%s`", fenceSafe(req.Command), codeText(target, 80))
	fields := []connectors.Field{{Title: "Why it needs a person", Value: strings.Join(req.Reasons, "; ")},
		{Title: "To run it", Value: fmt.Sprintf("mention me in this thread: `run %s %s`", codeText(req.Target, 60), codeText(req.Command, 200))}}
	return connectors.Message{Text: text, Fields: fields}
}

// fenceSafe keeps a command from closing its code block.
func fenceSafe(s string) string { return strings.ReplaceAll(s, "```", "`\u200b``") }

// bind makes requests of the session proposals in the group's thread.
func (p *AlertProposals) bind(session int64, id groupID, dest connectors.Dest) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bound[session] = proposalPlace{id: id, dest: dest}
}

func (p *AlertProposals) unbind(session int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.bound, session)
}
