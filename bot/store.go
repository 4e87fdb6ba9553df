package bot

import (
	"context"
	"time"

	"github.com/opsbot/opsbot/bot/render"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/store"
)

// What the bot keeps in SQLite, by the store's aggregates: each part
// declares the few methods it calls, next to it, and each of these is the
// union of those parts' slices of one aggregate, so that Deps takes one
// sub-store per aggregate. *store.Store is every one of them.

// ApprovalStore is what the bot reads and records of approval requests,
// their cards and their follow-ups (the Approvals aggregate).
type ApprovalStore interface {
	cardStore
	followUpStore
	pendingApprovals
	RecordFollowUp(ctx context.Context, f store.FollowUp) error
}

// SessionStore is what the bot reads and records of sessions, their turns
// and the answers being streamed (the Sessions aggregate).
type SessionStore interface {
	sessionLookup
	HasSession(ctx context.Context, key store.ThreadKey) (bool, error)
	SetSessionCwd(ctx context.Context, id int64, cwd string) error
	turnRecords
	recoveryStore
	DeleteMessagesAfter(ctx context.Context, sessionID, seq int64) (int64, error)
	render.StreamRecorder
}

// InboxStore is the inbox of platform events and of job notifications
// (the Inbox aggregate).
type InboxStore interface {
	eventLog
	noticeStore
}

// JobStore is what the bot reads of background jobs, marks of those a
// crash cut, and clears of the commands it swept (the Jobs aggregate).
type JobStore interface {
	orphanStore
	Jobs(ctx context.Context, sessionID int64, limit int) ([]hosts.Job, error)
	Job(ctx context.Context, id int64) (hosts.Job, error)
	InterruptRunningJobs(ctx context.Context) ([]hosts.Job, error)
}

// eventLog is the inbox of platform events, for the record stage, the
// finish of each event, the replay at start-up, the settled check and the
// pruning of event ids.
type eventLog interface {
	RecordEvent(ctx context.Context, platform, eventID string, event []byte) (id int64, first bool, err error)
	Unsettled(ctx context.Context) (int, error)
	FinishEvent(ctx context.Context, id int64) error
	OpenEvents(ctx context.Context) ([]store.InboxEvent, error)
	ForgetEventsBefore(ctx context.Context, t time.Time) (int64, error)
	KeepQueuedNotice(ctx context.Context, id int64, ref []byte) error
}

// LedgerStore keeps the commands running, for the sweep after a crash
// (sweep.go).
type LedgerStore interface {
	AddRunning(ctx context.Context, c store.RunningCommand) (int64, error)
	RemoveRunning(ctx context.Context, id int64) error
	RunningCommands(ctx context.Context) ([]store.RunningCommand, error)
}

var (
	_ ApprovalStore = (*store.Approvals)(nil)
	_ SessionStore  = (*store.Sessions)(nil)
	_ InboxStore    = (*store.Inbox)(nil)
	_ JobStore      = (*store.Jobs)(nil)
)
