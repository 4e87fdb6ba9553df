package bot

import (
	"context"
	"errors"
	"fmt"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
)

// ActionStop is the Stop button's action id; its value is the thread.
const ActionStop = "stop"

// errShutdown is the cancel cause of the work Close stops: the agent ends
// its turn (agent.ErrShutdown), and a request the work waits on stays
// pending for after the restart (approvals.ErrShutdown).
var errShutdown = errors.Join(agent.ErrShutdown, approvals.ErrShutdown)

// stoppable is the context of a thread's work and the func that stops it
// (threads.stop, close): a person's first Stop ends an agent turn with a
// short summary of what it found, a second ends that summary at once, and
// a shutdown (errShutdown) stops it at once, to be resumed after the
// restart (agent.Stoppable).
func stoppable() (context.Context, context.CancelCauseFunc) {
	return agent.Stoppable(context.Background())
}

// stopperOf is who asks to stop, from their event.
func stopperOf(ev connectors.Event) approvals.StoppedBy {
	name := ev.User.Name
	if name == "" {
		name = ev.User.ID
	}
	return approvals.StoppedBy{Person: approvals.Person{Platform: ev.Platform, ID: ev.User.ID, Groups: ev.User.Groups}, Name: name}
}

// stopRefusal says why the person of ev may not stop the work running in
// thread id, or "": the person who asked for it may, and so may anyone who
// may approve commands in the channel.
func stopRefusal(ts *threads, may approvers, id threadID, ev connectors.Event) string {
	owner := ts.owner(id)
	if owner == "" || owner == ev.User.ID || may.approve(ev) {
		return ""
	}
	return fmt.Sprintf("Not stopped: only %s, who asked for it, or an approver may stop it.", connectors.Mention(owner))
}

// approvers tells who may approve commands: they may stop anyone's work
// and cancel anyone's job.
type approvers struct {
	// gate is nil when nobody can approve.
	gate  *approvals.Gate
	hosts []agent.HostInfo
}

// approve reports whether the person of ev may approve commands in the
// event's channel, on at least one host.
func (a approvers) approve(ev connectors.Event) bool {
	if a.gate == nil {
		return false
	}
	p := stopperOf(ev).Person
	for _, h := range a.hosts {
		if a.gate.MayApprove(approvals.Approval{Channel: ev.Channel, Host: h.Name}, p) {
			return true
		}
	}
	return false
}
