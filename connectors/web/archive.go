package web

import (
	"context"
	"encoding/json"
	"sync"
	"time"
)

// Archive keeps the chat's messages across restarts. The connector saves
// every change of a message (its whole latest state, so Save is an upsert
// by ID) and loads them all once, in New. Saves of one message arrive in
// the order of their Seq.
type Archive interface {
	Save(ctx context.Context, m StoredMessage) error
	Load(ctx context.Context) ([]StoredMessage, error)
}

// StoredMessage is one message's latest state, as an Archive keeps it.
type StoredMessage struct {
	// ID is the message's id ("m" and a number), unique in the chat.
	ID      string
	Channel string
	// Thread is the id of the thread's first message; a first message's
	// Thread is its own ID.
	Thread string
	// User is the author's name; the bot's messages have Bot set.
	User string
	Bot  bool
	// Message is the content as JSON: {"text", "fields", "context",
	// "buttons"}, the shape the HTTP API shows.
	Message json.RawMessage
	// Finished is false while the bot is still writing the message.
	Finished bool
	// Seq is the sequence number of the message's latest change.
	Seq     uint64
	Created time.Time
	Updated time.Time
}

// MemoryArchive is an Archive in memory, for tests and for running
// without a database.
type MemoryArchive struct {
	mu    sync.Mutex
	order []string
	byID  map[string]StoredMessage
}

var _ Archive = (*MemoryArchive)(nil)

// NewMemoryArchive returns an empty MemoryArchive.
func NewMemoryArchive() *MemoryArchive {
	return &MemoryArchive{byID: map[string]StoredMessage{}}
}

// Save stores m, replacing the message with the same ID.
func (a *MemoryArchive) Save(_ context.Context, m StoredMessage) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.byID[m.ID]; !ok {
		a.order = append(a.order, m.ID)
	}
	m.Message = append(json.RawMessage(nil), m.Message...)
	a.byID[m.ID] = m
	return nil
}

// Load returns every message, in the order they were first saved.
func (a *MemoryArchive) Load(context.Context) ([]StoredMessage, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]StoredMessage, 0, len(a.order))
	for _, id := range a.order {
		out = append(out, a.byID[id])
	}
	return out, nil
}
