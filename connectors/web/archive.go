package web

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"
)

// Archive keeps the chat's messages, across restarts and beyond what the
// connector holds in memory: the connector keeps an index of the threads
// and its recently used messages, and reads the rest from here, a page at
// a time. It saves every change of a message (its whole latest state, so
// Save is an upsert by ID); saves of one message arrive in the order of
// their Seq.
type Archive interface {
	Save(ctx context.Context, m StoredMessage) error
	// Threads sums up every thread, once, in New; Mentioned is set where
	// a person's message contains needle (any ASCII case).
	Threads(ctx context.Context, needle string) ([]StoredThread, error)
	// Messages returns the messages with these ids that exist.
	Messages(ctx context.Context, ids []string) ([]StoredMessage, error)
	// ThreadMessages returns up to limit messages of a thread numbered
	// below before (0: the newest), newest first.
	ThreadMessages(ctx context.Context, thread string, before uint64, limit int) ([]StoredMessage, error)
	// Changed returns up to limit messages whose latest change has
	// after < Seq <= upTo, in Seq order, of one channel and one thread
	// ("": any).
	Changed(ctx context.Context, after, upTo uint64, channel, thread string, limit int) ([]StoredMessage, error)
	// DeleteThreads deletes every message of these threads.
	DeleteThreads(ctx context.Context, threads []string) error
}

// ChangeLister is an Archive that lists what changed without reading the
// messages themselves: a replay reads only those whose frames the hub
// does not keep already. Without it, a replay reads whole pages with
// Changed.
type ChangeLister interface {
	// ChangedIDs lists up to limit messages whose latest change has
	// after < Seq <= upTo, in Seq order, of one channel and one thread
	// ("": any), as Changed would return them.
	ChangedIDs(ctx context.Context, after, upTo uint64, channel, thread string, limit int) ([]Change, error)
}

// Change names a message's latest change.
type Change struct {
	ID  string
	Seq uint64
}

// SeqKeeper is an Archive that also keeps the chat's sequence number
// apart from the messages: the hub reserves numbers a block ahead, so that
// after a restart it starts above every id and seq a client has seen,
// even those of changes that were lost or threads since deleted.
type SeqKeeper interface {
	// ReserveSeq records that numbers up to upTo may be handed out.
	ReserveSeq(ctx context.Context, upTo uint64) error
	// ReservedSeq is the highest number reserved so far (0: none).
	ReservedSeq(ctx context.Context) (uint64, error)
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
	// Request is what a person's message was posted with (zero for the
	// bot's messages); an Archive keeps it from the first Save on.
	Request PostRequest
}

// PostRequest is the request that posted a person's message: Key names
// the client and its X-Request-Id, Digest what it posted, and ForBot says
// whether the message went to the bot. A post retried with the same id
// finds its first answer by it.
type PostRequest struct {
	Key, Digest string
	ForBot      bool
}

// RequestKeeper is an Archive that lists the latest posts made with a
// request id, newest first (ID, Channel, Thread and Request are enough):
// the connector remembers them at New, so that a post retried after a
// restart gets its first answer instead of making a second message.
type RequestKeeper interface {
	PostRequests(ctx context.Context, limit int) ([]StoredMessage, error)
}

// StoredThread sums up one thread of an Archive.
type StoredThread struct {
	ID, Channel string
	// Replies counts the messages after the first.
	Replies int
	// Seq and Updated are those of the thread's latest change; LastID is
	// the highest message number in it.
	Seq     uint64
	Updated time.Time
	LastID  uint64
	// HasBot: the bot posted in it. Mentioned: a person's message holds
	// the needle Threads was given.
	HasBot, Mentioned bool
}

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
