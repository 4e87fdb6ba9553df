package bot

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/store"
)

// jobNotices posts into each thread how its background jobs ended, and
// then, when turn is set, has the agent say what the outcome means.
type jobNotices struct {
	store noticeStore
	// session reads the session of a notice, the thread it is posted in;
	// job reads a job, for the agent turn about its end.
	session func(ctx context.Context, id int64) (store.Session, error)
	job     func(ctx context.Context, id int64) (hosts.Job, error)
	out     poster
	// turn is the event of the agent turn about job, which ended, in the
	// session's thread (agent.on_job_end: turn); nil: the news is only
	// posted. queue hands it, once on record, to the router.
	turn  func(sess store.Session, job hosts.Job) connectors.Event
	queue func(ev connectors.Event, inboxID int64)
	log   *slog.Logger
	// serves names the platforms this process posts to; only their
	// notes are taken (nil: all).
	serves func() []string
}

// noticeStore is what delivering notifications reads and marks.
type noticeStore interface {
	UndeliveredNotifications(ctx context.Context, limit int, platforms ...string) ([]store.Notification, error)
	MarkDelivered(ctx context.Context, ids ...int64) (int64, error)
	DeliverNotification(ctx context.Context, id int64, platform string, turn []byte) (int64, error)
}

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
		sess, err := n.session(ctx, note.SessionID)
		if err != nil {
			continue
		}
		if _, ok := n.out.conn(sess.Platform); !ok {
			continue // another process's, or a platform configured again later
		}
		ev, rec, ok := n.turnOf(ctx, note, sess)
		if !ok {
			continue // the next round tries again, before anything is posted
		}
		d := connectors.Dest{Platform: sess.Platform, Workspace: sess.Workspace, Channel: sess.Channel, Thread: sess.Thread}
		if _, err := n.out.post(ctx, d, jobNotice(note.Text)); err != nil {
			n.log.Warn("post notification", "id", note.ID, "err", err)
			continue
		}
		n.delivered(ctx, note, sess, ev, rec)
	}
}

// turnOf is the agent turn a notice asks for, as its event and its inbox
// record (nil: none); read before the notice is posted, so that a notice
// posted always has its turn recorded with its delivery. ok is false when
// the job could not be read.
func (n *jobNotices) turnOf(ctx context.Context, note store.Notification, sess store.Session) (ev connectors.Event, rec []byte, ok bool) {
	if n.turn == nil || note.JobID == 0 {
		return ev, nil, true
	}
	job, err := n.job(ctx, note.JobID)
	if err != nil {
		n.log.Warn("job of notification", "id", note.ID, "err", err)
		return ev, nil, false
	}
	ev = n.turn(sess, job)
	rec, _ = json.Marshal(inboxRecord{Event: ev, JobEnd: true}) // strings and bools: cannot fail
	return ev, rec, true
}

// delivered marks a posted notice delivered and, with turn, records the
// agent turn about its job in the same write, then queues that turn: the
// turn runs once, whether or not opsbot stops before it begins. (Only a
// crash in the instant between the notice's post and this write posts
// the notice again; its turn is recorded once either way.)
func (n *jobNotices) delivered(ctx context.Context, note store.Notification, sess store.Session, ev connectors.Event, rec []byte) {
	// Kept though a stop is under way: posted and not marked, the notice
	// would be posted again by the next start.
	id, err := n.store.DeliverNotification(context.WithoutCancel(ctx), note.ID, sess.Platform, rec)
	if err != nil {
		// Posted, not marked: the next round posts it again.
		n.log.Warn("mark notification delivered", "id", note.ID, "err", err)
		return
	}
	if id != 0 && n.queue != nil {
		n.queue(ev, id)
	}
}

// jobNotice is the message that tells a thread how its job ended.
func jobNotice(text string) connectors.Message { return connectors.Message{Text: "🔔 " + text} }
