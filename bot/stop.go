package bot

import (
	"fmt"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
)

// ActionStop is the Stop button's action id; its value is the thread.
const ActionStop = "stop"

// stoppedBy is the cancel cause of a turn a person stopped (a shutdown's is
// agent.ErrShutdown).
type stoppedBy struct {
	Person approvals.Person
	Name   string
}

func (s stoppedBy) Error() string { return "stopped by @" + s.Name }

// stopTurn cancels a thread's running turn on behalf of by; it reports
// whether one ran.
func (b *Bot) stopTurn(id threadID, by stoppedBy) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.threads[id]
	if t == nil || !t.running || t.cancel == nil {
		return false
	}
	t.cancel(by)
	return true
}

// stopperOf is who asks to stop, from their event.
func stopperOf(ev connectors.Event) stoppedBy {
	name := ev.User.Name
	if name == "" {
		name = ev.User.ID
	}
	return stoppedBy{Person: approvals.Person{Platform: ev.Platform, ID: ev.User.ID, Groups: ev.User.Groups}, Name: name}
}

// stopRefusal says why the person of ev may not stop the work running in
// thread id, or "": the person who asked for it may, and so may anyone who
// may approve commands in the channel.
func (b *Bot) stopRefusal(id threadID, ev connectors.Event) string {
	b.mu.Lock()
	t := b.threads[id]
	owner := ""
	if t != nil && t.running {
		owner = t.owner
	}
	b.mu.Unlock()
	if owner == "" || owner == ev.User.ID || b.isApprover(ev) {
		return ""
	}
	return fmt.Sprintf("Not stopped: only %s, who asked for it, or an approver may stop it.", connectors.Mention(owner))
}

// isApprover reports whether the person of ev may approve commands in the
// event's channel, on at least one host.
func (b *Bot) isApprover(ev connectors.Event) bool {
	if b.Gate == nil {
		return false
	}
	p := stopperOf(ev).Person
	for _, h := range b.Hosts {
		if b.Gate.MayApprove(approvals.Approval{Channel: ev.Channel, Host: h.Name}, p) {
			return true
		}
	}
	return false
}
