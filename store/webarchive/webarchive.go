// Package webarchive keeps the web chat's messages in the store: the
// adapter between connectors/web's Archive and store's SQLite, for the
// programs that wire the two (cmd/opsbot, the benchmarks).
package webarchive

import (
	"context"

	"github.com/opsbot/opsbot/connectors/web"
	"github.com/opsbot/opsbot/store"
)

// Archive is a web.Archive in SQLite.
type Archive struct{ Store *store.Store }

var (
	_ web.Archive       = Archive{}
	_ web.SeqKeeper     = Archive{}
	_ web.RequestKeeper = Archive{}
	_ web.ChangeLister  = Archive{}
	_ web.PeopleLister  = Archive{}
)

// Save stores a message's latest state.
func (a Archive) Save(ctx context.Context, m web.StoredMessage) error {
	return a.Store.Web().SaveWebMessage(ctx, store.WebMessage{ID: m.ID, Channel: m.Channel, Thread: m.Thread, User: m.User, Bot: m.Bot,
		Message: m.Message, Finished: m.Finished, Seq: m.Seq, Created: m.Created, Updated: m.Updated,
		Request: store.WebPostRequest{Key: m.Request.Key, Digest: m.Request.Digest, ForBot: m.Request.ForBot}})
}

// Threads sums up every thread.
func (a Archive) Threads(ctx context.Context, needle string) ([]web.StoredThread, error) {
	rows, err := a.Store.Web().WebThreads(ctx, needle)
	out := make([]web.StoredThread, len(rows))
	for i, t := range rows {
		out[i] = web.StoredThread{ID: t.ID, Channel: t.Channel, Replies: t.Replies, Seq: t.Seq, Updated: t.Updated, LastID: t.LastID,
			HasBot: t.HasBot, Mentioned: t.Mentioned}
	}
	return out, err
}

// Messages returns the messages with these ids.
func (a Archive) Messages(ctx context.Context, ids []string) ([]web.StoredMessage, error) {
	return convert(a.Store.Web().WebMessagesByID(ctx, ids))
}

// ThreadMessages returns a page of a thread, newest first.
func (a Archive) ThreadMessages(ctx context.Context, thread string, before uint64, limit int) ([]web.StoredMessage, error) {
	return convert(a.Store.Web().WebThreadMessages(ctx, thread, before, limit))
}

// Changed returns a page of what changed after a seq, in seq order.
func (a Archive) Changed(ctx context.Context, after, upTo uint64, channel, thread string, limit int) ([]web.StoredMessage, error) {
	return convert(a.Store.Web().WebMessagesChanged(ctx, after, upTo, channel, thread, limit))
}

// ChangedIDs lists a page of what changed after a seq, ids and seqs only.
func (a Archive) ChangedIDs(ctx context.Context, after, upTo uint64, channel, thread string, limit int) ([]web.Change, error) {
	rows, err := a.Store.Web().WebChangedIDs(ctx, after, upTo, channel, thread, limit)
	out := make([]web.Change, len(rows))
	for i, c := range rows {
		out[i] = web.Change{ID: c.ID, Seq: c.Seq}
	}
	return out, err
}

// People lists the names of the people who posted, in the order they
// first posted.
func (a Archive) People(ctx context.Context) ([]string, error) {
	return a.Store.Web().WebPeople(ctx)
}

// DeleteThreads deletes the threads' messages.
func (a Archive) DeleteThreads(ctx context.Context, threads []string) error {
	return a.Store.Web().DeleteWebThreads(ctx, threads)
}

func convert(rows []store.WebMessage, err error) ([]web.StoredMessage, error) {
	out := make([]web.StoredMessage, len(rows))
	for i, m := range rows {
		out[i] = web.StoredMessage{ID: m.ID, Channel: m.Channel, Thread: m.Thread, User: m.User, Bot: m.Bot,
			Message: m.Message, Finished: m.Finished, Seq: m.Seq, Created: m.Created, Updated: m.Updated,
			Request: web.PostRequest{Key: m.Request.Key, Digest: m.Request.Digest, ForBot: m.Request.ForBot}}
	}
	return out, err
}

// ReserveSeq records that sequence numbers up to upTo may be handed out.
func (a Archive) ReserveSeq(ctx context.Context, upTo uint64) error {
	return a.Store.Web().ReserveWebSeq(ctx, upTo)
}

// ReservedSeq is the highest sequence number reserved so far.
func (a Archive) ReservedSeq(ctx context.Context) (uint64, error) { return a.Store.Web().WebSeq(ctx) }

// PostRequests returns the latest posts made with a request id.
func (a Archive) PostRequests(ctx context.Context, limit int) ([]web.StoredMessage, error) {
	return convert(a.Store.Web().WebPostRequests(ctx, limit))
}
