package agent

import (
	"context"
	"sync"
)

// SessionInfo is what a turn knows of the conversation it belongs to.
type SessionInfo struct {
	// ID keys the history; 0 is a session that is never persisted.
	ID int64
	// Requester is who asked (a platform user id or name); approvals bind
	// to it and refuse it as an approver.
	Requester string
	// Cwd is the session's working directory on the local host.
	Cwd      string
	Platform string
	Channel  string
	// Kind is what the session is for: KindAlert for an alert
	// investigation, whose turns TokenBudget.Alert bounds.
	Kind SessionKind
}

// History persists a session's conversation. Seq numbers only grow: a
// rollback point taken before a compaction never names a later message.
type History interface {
	Load(ctx context.Context, sessionID int64) (msgs []Message, lastSeq int64, err error)
	Append(ctx context.Context, sessionID int64, msgs ...Message) (lastSeq int64, err error)
	Rollback(ctx context.Context, sessionID, toSeq int64) error
	// Compact archives the whole history and replaces it with msgs.
	Compact(ctx context.Context, sessionID int64, msgs ...Message) (lastSeq int64, err error)
}

// MemoryHistory keeps history in memory: subagents and one-shot questions.
type MemoryHistory struct {
	mu       sync.Mutex
	sessions map[int64][]Message
	seq      map[int64]int64
	// Archived holds compacted transcripts, for inspection.
	Archived map[int64][][]Message
}

var _ History = (*MemoryHistory)(nil)

// NewMemoryHistory returns an empty history.
func NewMemoryHistory() *MemoryHistory {
	return &MemoryHistory{sessions: map[int64][]Message{}, seq: map[int64]int64{}, Archived: map[int64][][]Message{}}
}

// Load returns a copy of the history. In memory a message's seq is its
// position plus the number compacted away before it.
func (h *MemoryHistory) Load(_ context.Context, id int64) ([]Message, int64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Message(nil), h.sessions[id]...), h.seq[id], nil
}

// Append adds messages.
func (h *MemoryHistory) Append(_ context.Context, id int64, msgs ...Message) (int64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sessions[id] = append(h.sessions[id], msgs...)
	h.seq[id] += int64(len(msgs))
	return h.seq[id], nil
}

// Rollback drops messages after toSeq.
func (h *MemoryHistory) Rollback(_ context.Context, id, toSeq int64) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	drop := h.seq[id] - toSeq
	if drop > 0 && drop <= int64(len(h.sessions[id])) {
		h.sessions[id] = h.sessions[id][:int64(len(h.sessions[id]))-drop]
		h.seq[id] = toSeq
	}
	return nil
}

// Compact archives and replaces.
func (h *MemoryHistory) Compact(_ context.Context, id int64, msgs ...Message) (int64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.Archived[id] = append(h.Archived[id], h.sessions[id])
	h.sessions[id] = append([]Message(nil), msgs...)
	h.seq[id] += int64(len(msgs))
	return h.seq[id], nil
}
