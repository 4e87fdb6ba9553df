package bot

import (
	"context"
	"sync"
)

// An approval is claimed (consumed) for its one run before the command
// starts; its follow-up (store.FollowUp) stays open until the command has
// started, and is closed in the same transaction that records the running
// command (ProcessLedger.Started). So after a crash, a consumed approval
// whose follow-up is still open is one whose command never started: the
// next start says so in its thread ("approved by @bob, but opsbot stopped
// before running it") — it is never silently lost, and never run twice.
// Before, the follow-up was closed first and the command started after,
// and a kill between the two left an approved command that never ran and
// nobody was told of.

// claims are the approvals a thread's work claimed and whose commands have
// not started yet, by command; one per thread's work item, in its ctx.
type claims struct {
	mu        sync.Mutex
	byCommand map[string][]string
}

type claimsKey struct{}

// withClaims gives ctx a place for the approvals its work claims.
func withClaims(ctx context.Context) context.Context {
	return context.WithValue(ctx, claimsKey{}, &claims{byCommand: map[string][]string{}})
}

func claimsOf(ctx context.Context) *claims {
	c, _ := ctx.Value(claimsKey{}).(*claims)
	return c
}

// add holds a claimed approval for command until its run starts.
func (c *claims) add(command, approvalID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.byCommand[command] = append(c.byCommand[command], approvalID)
}

// take returns the approval held for command, if any.
func (c *claims) take(command string) string {
	if c == nil {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := c.byCommand[command]
	if len(ids) == 0 {
		return ""
	}
	c.byCommand[command] = ids[1:]
	return ids[0]
}

// takeAll returns every approval still held.
func (c *claims) takeAll() []string {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for cmd, ids := range c.byCommand {
		out = append(out, ids...)
		delete(c.byCommand, cmd)
	}
	return out
}

// FollowUpFinisher closes an approval's follow-up; *store.Store has it.
type FollowUpFinisher interface {
	FinishFollowUp(ctx context.Context, approvalID string) (bool, error)
}

// settleClaims closes the follow-ups of the approvals ctx still holds
// claimed for command (or all, for ""): their commands were started by a
// path the process ledger does not see (a background job, whose own row
// records it), or failed to start and said so.
func settleClaims(ctx context.Context, st FollowUpFinisher, command string) {
	c := claimsOf(ctx)
	var ids []string
	if command == "" {
		ids = c.takeAll()
	}
	for id := c.take(command); command != "" && id != ""; id = c.take(command) {
		ids = append(ids, id)
	}
	for _, id := range ids {
		st.FinishFollowUp(context.WithoutCancel(ctx), id)
	}
}
