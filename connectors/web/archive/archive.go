// Package archive is the web chat's archive contract: the messages the
// web connector keeps beyond its memory, and the interfaces a store
// implements to keep them (the store's Web sub-store is one). It is the
// connector's own, apart from it so that a store can implement it without
// importing a concrete adapter.
package archive

import (
	"context"
	"encoding/json"
	"time"
)

// Archive keeps the chat's messages, across restarts and beyond what the
// connector holds in memory: the connector keeps an index of the threads
// and its recently used messages, and reads the rest from here, a page at
// a time. It saves every change of a message (its whole latest state, so
// Save is an upsert by ID); saves of one message arrive in the order of
// their Seq.
type Archive interface {
	Save(ctx context.Context, m Message) error
	// Threads sums up every thread, once, in New; Mentioned is set where
	// a person's message contains needle (any ASCII case).
	Threads(ctx context.Context, needle string) ([]Thread, error)
	// Messages returns the messages with these ids that exist.
	Messages(ctx context.Context, ids []string) ([]Message, error)
	// ThreadMessages returns up to limit messages of a thread numbered
	// below before (0: the newest), newest first.
	ThreadMessages(ctx context.Context, thread string, before uint64, limit int) ([]Message, error)
	// Changed returns up to limit messages whose latest change has
	// after < Seq <= upTo, in Seq order, of one channel and one thread
	// ("": any).
	Changed(ctx context.Context, after, upTo uint64, channel, thread string, limit int) ([]Message, error)
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

// Message is one message's latest state, as an Archive keeps it.
type Message struct {
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
	PostRequests(ctx context.Context, limit int) ([]Message, error)
}

// Thread sums up one thread of an Archive.
type Thread struct {
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

// PeopleLister is an Archive that lists the names of the people who
// posted in the chat, each once, in the order they first posted: New
// learns them, so a name that folds to one of them is refused after a
// restart too.
type PeopleLister interface {
	People(ctx context.Context) ([]string, error)
}
