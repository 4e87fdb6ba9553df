package bot

import (
	"context"
	"encoding/json"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/store"
)

// A queued notice outlives a crash: its message is kept on the inbox row
// of the work it is about (store.Inbox.KeepQueuedNotice), and the start
// that routes that work again takes the notice over — edited to the
// work's new place in line, or to "started" — instead of leaving the
// number the killed process showed last (issue 28 item 5).

// noticeFor tells q's thread that its work waits at place, and returns
// the notice to keep up to date (nil: none). Work a previous process
// queued takes over the notice it posted; other replayed work was told
// when it came and is not told again.
func (ts *threads) noticeFor(ctx context.Context, q queued, place chan struct{}) *queuedNotice {
	if q.notice != nil {
		return ts.board.adopt(ctx, q.ev, *q.notice, place)
	}
	if q.replayed {
		return nil
	}
	qn := ts.board.post(ctx, q.ev, place)
	if qn != nil && q.inboxID != 0 && ts.keepNotice != nil {
		ts.keepNotice(ctx, q.inboxID, qn.ref)
	}
	return qn
}

// adopt keeps a notice a previous process posted up to date, as post
// does its own: what it shows is that process's last number, so the
// board edits it to place's at once.
func (b *queueBoard) adopt(ctx context.Context, ev connectors.Event, ref connectors.Ref, place chan struct{}) *queuedNotice {
	qn := &queuedNotice{place: place, ev: ev, ref: ref}
	qn.shown.Store(-1)
	b.follow(ctx, qn)
	return qn
}

// keepNotice records the queued notice ref on inbox row id; a failure
// only costs the edit after a crash.
func (in *inbox) keepNotice(ctx context.Context, id int64, ref connectors.Ref) {
	b, err := json.Marshal(ref)
	if err == nil {
		err = in.store.KeepQueuedNotice(context.WithoutCancel(ctx), id, b)
	}
	if err != nil {
		in.log.Warn("keep a queued notice", "id", id, "err", err)
	}
}

// noticeOf is the queued notice kept on an open event, nil when none (or
// unreadable: the work then runs without it).
func (in *inbox) noticeOf(e store.InboxEvent) *connectors.Ref {
	if e.QueuedNotice == nil {
		return nil
	}
	var ref connectors.Ref
	if err := json.Unmarshal(e.QueuedNotice, &ref); err != nil {
		in.log.Warn("a queued notice on record cannot be read", "id", e.ID, "err", err)
		return nil
	}
	return &ref
}
