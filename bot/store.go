package bot

import (
	"context"
	"time"

	"github.com/opsbot/opsbot/store"
)

// Store is what the bot keeps in SQLite: the union of what each of its
// parts uses, each through a small interface of its own, so that a part
// depends on the few methods it calls and is tested over a fake of them.
// *store.Store is one.
type Store interface {
	eventStore
	sessionStore
	turnStore
	FollowUpFinisher
	LedgerStore
	StreamRecorder
	commandStore
	recoveryStore
	noticeStore
	cardStore
	followUpStore
}

// eventStore is the inbox of platform events and the ids of those seen,
// for dropping a platform's retries (inbox.go, lifecycle.go).
type eventStore interface {
	RecordEvent(ctx context.Context, platform, eventID string, event []byte) (id int64, first bool, err error)
	FinishEvent(ctx context.Context, id int64) error
	OpenEvents(ctx context.Context) ([]store.InboxEvent, error)
	SeenEvent(ctx context.Context, platform, eventID string) (first bool, err error)
	ForgetEventsBefore(ctx context.Context, t time.Time) (int64, error)
	// Unsettled counts what is on record and not yet acted on (settled.go).
	Unsettled(ctx context.Context) (int, error)
}

// sessionStore finds a thread's session (the router).
type sessionStore interface {
	SessionFor(ctx context.Context, key store.ThreadKey) (store.Session, bool, error)
	HasSession(ctx context.Context, key store.ThreadKey) (bool, error)
	SetSessionCwd(ctx context.Context, id int64, cwd string) error
}

// turnStore records agent turns and what an approval they wait on leads
// to (turns.go).
type turnStore interface {
	BeginTurn(ctx context.Context, sessionID int64) (store.Turn, error)
	EndTurn(ctx context.Context, id int64, status store.TurnStatus) (bool, error)
	RecordFollowUp(ctx context.Context, f store.FollowUp) error
}

// LedgerStore keeps the commands running, for the sweep after a crash
// (sweep.go).
type LedgerStore interface {
	AddRunning(ctx context.Context, c store.RunningCommand) (int64, error)
	RemoveRunning(ctx context.Context, id int64) error
	RunningCommands(ctx context.Context) ([]store.RunningCommand, error)
}

var _ Store = store.Flat{}
