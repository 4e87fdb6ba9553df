package bot

import (
	"context"
	"log/slog"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/store"
)

// jobNotices posts into each thread how its background jobs ended, and
// then, when wake is set, has the agent say what the outcome means.
type jobNotices struct {
	store noticeStore
	out   platforms
	// wake runs an agent turn in the session's thread about job, which
	// ended; nil: the news is only posted.
	wake func(sess store.Session, job store.Job)
	log  *slog.Logger
	// serves names the platforms this process posts to; only their
	// notes are taken (nil: all).
	serves func() []string
}

// noticeStore is what delivering notifications reads and marks.
type noticeStore interface {
	UndeliveredNotifications(ctx context.Context, limit int, platforms ...string) ([]store.Notification, error)
	MarkDelivered(ctx context.Context, ids ...int64) (int64, error)
	MarkInjected(ctx context.Context, ids ...int64) (int64, error)
	Session(ctx context.Context, id int64) (store.Session, error)
	Job(ctx context.Context, id int64) (store.Job, error)
}

var _ noticeStore = (*store.Store)(nil)

// deliver posts the notifications not delivered yet on the platforms it
// serves. One on another platform is left for the process that serves it
// (opsbot chat beside opsbot run marked the web chat's delivered, unposted).
func (n *jobNotices) deliver(ctx context.Context) {
	var serves []string
	if n.serves != nil {
		serves = n.serves()
	}
	notes, err := n.store.UndeliveredNotifications(ctx, 50, serves...)
	if err != nil {
		n.log.Warn("notifications", "err", err)
		return
	}
	for _, note := range notes {
		if note.SessionID == 0 {
			n.store.MarkDelivered(ctx, note.ID)
			continue
		}
		sess, err := n.store.Session(ctx, note.SessionID)
		if err != nil {
			continue
		}
		if _, ok := n.out.conn(sess.Platform); !ok {
			continue // another process's, or a platform configured again later
		}
		d := connectors.Dest{Platform: sess.Platform, Workspace: sess.Workspace, Channel: sess.Channel, Thread: sess.Thread}
		if _, err := n.out.post(ctx, d, jobNotice(note.Text)); err != nil {
			n.log.Warn("post notification", "id", note.ID, "err", err)
			continue
		}
		n.store.MarkDelivered(ctx, note.ID)
		n.wakeAgent(ctx, note, sess)
	}
}

// wakeAgent hands the ended job to wake, once: the turn's message carries
// the news, so it is marked injected and not given to the model again.
func (n *jobNotices) wakeAgent(ctx context.Context, note store.Notification, sess store.Session) {
	if n.wake == nil || note.JobID == 0 {
		return
	}
	job, err := n.store.Job(ctx, note.JobID)
	if err != nil {
		n.log.Warn("job of notification", "id", note.ID, "err", err)
		return
	}
	if _, err := n.store.MarkInjected(ctx, note.ID); err != nil {
		n.log.Warn("mark notification injected", "id", note.ID, "err", err)
		return
	}
	n.wake(sess, job)
}

// jobNotice is the message that tells a thread how its job ended.
func jobNotice(text string) connectors.Message { return connectors.Message{Text: "🔔 " + text} }
