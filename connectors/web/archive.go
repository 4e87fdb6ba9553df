package web

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"github.com/opsbot/opsbot/connectors/web/archive"
)

// The archive contract lives in connectors/web/archive, so that a store
// implements it without importing the connector; these are its names here.
type (
	// Archive keeps the chat's messages; see archive.Archive.
	Archive = archive.Archive
	// ChangeLister lists what changed; see archive.ChangeLister.
	ChangeLister = archive.ChangeLister
	// Change names a message's latest change.
	Change = archive.Change
	// SeqKeeper keeps the sequence number; see archive.SeqKeeper.
	SeqKeeper = archive.SeqKeeper
	// StoredMessage is one message's latest state; see archive.Message.
	StoredMessage = archive.Message
	// PostRequest is the request that posted a person's message.
	PostRequest = archive.PostRequest
	// RequestKeeper lists the latest posts made with a request id.
	RequestKeeper = archive.RequestKeeper
	// StoredThread sums up one thread; see archive.Thread.
	StoredThread = archive.Thread
	// PeopleLister lists who posted; see archive.PeopleLister.
	PeopleLister = archive.PeopleLister
)

// MemoryArchive is an Archive in memory, for tests and for running
// without a database.
type MemoryArchive struct {
	mu   sync.Mutex
	byID map[string]StoredMessage
}

var (
	_ Archive       = (*MemoryArchive)(nil)
	_ RequestKeeper = (*MemoryArchive)(nil)
	_ ChangeLister  = (*MemoryArchive)(nil)
	_ PeopleLister  = (*MemoryArchive)(nil)
)

// NewMemoryArchive returns an empty MemoryArchive.
func NewMemoryArchive() *MemoryArchive {
	return &MemoryArchive{byID: map[string]StoredMessage{}}
}

// Save stores m, replacing the message with the same ID unless that one
// is newer.
func (a *MemoryArchive) Save(_ context.Context, m StoredMessage) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if old, ok := a.byID[m.ID]; ok && old.Seq > m.Seq {
		return nil
	}
	m.Message = append(json.RawMessage(nil), m.Message...)
	a.byID[m.ID] = m
	return nil
}

// Threads sums up every thread.
func (a *MemoryArchive) Threads(_ context.Context, needle string) ([]StoredThread, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	by := map[string]*StoredThread{}
	for _, m := range a.byID {
		t := by[m.Thread]
		if t == nil {
			t = &StoredThread{ID: m.Thread, Channel: m.Channel, Replies: -1}
			by[m.Thread] = t
		}
		t.Replies++
		if m.Seq > t.Seq {
			t.Seq, t.Updated = m.Seq, m.Updated
		}
		t.LastID = max(t.LastID, uint64(idNumber(m.ID)))
		t.HasBot = t.HasBot || m.Bot
		t.Mentioned = t.Mentioned || (!m.Bot && strings.Contains(strings.ToLower(string(m.Message)), strings.ToLower(needle)))
	}
	out := make([]StoredThread, 0, len(by))
	for _, t := range by {
		out = append(out, *t)
	}
	return out, nil
}

// Messages returns the messages with these ids.
func (a *MemoryArchive) Messages(_ context.Context, ids []string) ([]StoredMessage, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []StoredMessage
	for _, id := range ids {
		if m, ok := a.byID[id]; ok {
			out = append(out, m)
		}
	}
	return out, nil
}

// ThreadMessages returns a page of a thread, newest first.
func (a *MemoryArchive) ThreadMessages(_ context.Context, thread string, before uint64, limit int) ([]StoredMessage, error) {
	out := a.filter(func(m StoredMessage) bool {
		return m.Thread == thread && (before == 0 || uint64(idNumber(m.ID)) < before)
	})
	slices.SortFunc(out, func(x, y StoredMessage) int { return idNumber(y.ID) - idNumber(x.ID) })
	return out[:min(limit, len(out))], nil
}

// Changed returns a page of what changed after a seq, in seq order.
func (a *MemoryArchive) Changed(_ context.Context, after, upTo uint64, channel, thread string, limit int) ([]StoredMessage, error) {
	out := a.filter(func(m StoredMessage) bool {
		return m.Seq > after && m.Seq <= upTo && (channel == "" || m.Channel == channel) && (thread == "" || m.Thread == thread)
	})
	slices.SortFunc(out, func(x, y StoredMessage) int { return cmpSeq(x.Seq, y.Seq) })
	return out[:min(limit, len(out))], nil
}

// ChangedIDs lists a page of what changed after a seq, in seq order.
func (a *MemoryArchive) ChangedIDs(ctx context.Context, after, upTo uint64, channel, thread string, limit int) ([]Change, error) {
	page, err := a.Changed(ctx, after, upTo, channel, thread, limit)
	out := make([]Change, len(page))
	for i, m := range page {
		out[i] = Change{ID: m.ID, Seq: m.Seq}
	}
	return out, err
}

// DeleteThreads deletes the threads' messages.
func (a *MemoryArchive) DeleteThreads(_ context.Context, threads []string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for id, m := range a.byID {
		if slices.Contains(threads, m.Thread) {
			delete(a.byID, id)
		}
	}
	return nil
}

func (a *MemoryArchive) filter(keep func(StoredMessage) bool) []StoredMessage {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []StoredMessage
	for _, m := range a.byID {
		if keep(m) {
			out = append(out, m)
		}
	}
	return out
}

// PostRequests returns the latest posts made with a request id.
func (a *MemoryArchive) PostRequests(_ context.Context, limit int) ([]StoredMessage, error) {
	out := a.filter(func(m StoredMessage) bool { return m.Request.Key != "" })
	slices.SortFunc(out, func(x, y StoredMessage) int { return idNumber(y.ID) - idNumber(x.ID) })
	return out[:min(limit, len(out))], nil
}

// People lists the names of the people who posted, in the order they
// first posted.
func (a *MemoryArchive) People(_ context.Context) ([]string, error) {
	msgs := a.filter(func(m StoredMessage) bool { return !m.Bot })
	slices.SortFunc(msgs, func(x, y StoredMessage) int { return idNumber(x.ID) - idNumber(y.ID) })
	var out []string
	seen := map[string]bool{}
	for _, m := range msgs {
		if !seen[m.User] {
			seen[m.User] = true
			out = append(out, m.User)
		}
	}
	return out, nil
}
