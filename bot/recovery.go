package bot

import (
	"context"
	"log/slog"
	"slices"
	"strings"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/store"
)

// interruptedNote ends an answer a crash cut short.
const interruptedNote = "\n\n_(interrupted: opsbot restarted before this answer finished)_"

// recovery finishes, at start-up, what a crash left half done: answers
// left mid-stream are finalized with a note, turns left running are
// marked interrupted, and jobs left running are marked so and reported,
// never re-run.
type recovery struct {
	store recoveryStore
	// interruptJobs marks the jobs a crash left running as interrupted.
	interruptJobs func(ctx context.Context) ([]hosts.Job, error)
	out           poster
	log           *slog.Logger
}

// recoveryStore is what recovery reads and marks.
type recoveryStore interface {
	StreamingMessages(ctx context.Context) ([]store.PostedMessage, error)
	FinishStreaming(ctx context.Context, id int64) error
	RunningTurns(ctx context.Context) ([]store.Turn, error)
	EndTurn(ctx context.Context, id int64, status store.TurnStatus) (bool, error)
}

// run does the whole recovery.
func (r *recovery) run(ctx context.Context) {
	r.finishAnswers(ctx)
	turns, err := r.store.RunningTurns(ctx)
	if err != nil {
		r.log.Error("find interrupted turns", "err", err)
	}
	for _, t := range turns {
		r.store.EndTurn(ctx, t.ID, store.TurnInterrupted)
	}
	if r.interruptJobs == nil {
		return
	}
	jobs, err := r.interruptJobs(ctx)
	if err != nil {
		r.log.Error("interrupt jobs", "err", err)
	}
	for _, j := range jobs {
		r.log.Warn("job interrupted by restart", "job", j.ID, "host", j.Host)
	}
}

// finishAnswers gives each answer a crash left mid-stream its last form,
// saying it was cut short; one whose platform is not configured now is
// kept for later.
func (r *recovery) finishAnswers(ctx context.Context) {
	msgs, err := r.store.StreamingMessages(ctx)
	if err != nil {
		r.log.Error("find interrupted answers", "err", err)
	}
	// Answers whose post never returned come last: by then every answer
	// on record is finished, and what is still being written is theirs.
	slices.SortStableFunc(msgs, func(x, y store.PostedMessage) int { return cmpBool(x.Pending(), y.Pending()) })
	for _, m := range msgs {
		c, ok := r.out.conn(m.Platform)
		if !ok {
			continue
		}
		if m.Pending() {
			r.finishUnrecorded(ctx, c, m)
			r.store.FinishStreaming(ctx, m.ID)
			continue
		}
		ref := connectors.Ref{Platform: m.Platform, Channel: m.Channel, Thread: m.Thread, ID: m.MessageID}
		if err := finalize(ctx, c, ref, connectors.Message{Text: m.Text + interruptedNote}); err != nil {
			r.log.Warn("finalize interrupted answer", "message", m.MessageID, "err", err)
		}
		r.store.FinishStreaming(ctx, m.ID)
	}
}

// finishUnrecorded settles an answer recorded before its post, whose post
// never returned before the crash: its platform id is unknown. A platform
// that keeps which messages are being written (connectors.UnfinishedLister)
// names it, and it is finished with the note; elsewhere, or when the post
// never arrived, the note is posted in the thread.
func (r *recovery) finishUnrecorded(ctx context.Context, c connectors.Connector, m store.PostedMessage) {
	d := connectors.Dest{Platform: m.Platform, Channel: m.Channel, Thread: m.Thread}
	if l, ok := unfinishedLister(c); ok {
		left, err := l.Unfinished(ctx, d)
		if err != nil {
			r.log.Warn("find an interrupted answer", "channel", m.Channel, "err", err)
		}
		for _, s := range left {
			if err := finalize(ctx, c, s.Ref, connectors.Message{Text: s.Message.Text + interruptedNote}); err != nil {
				r.log.Warn("finalize interrupted answer", "message", s.Ref.ID, "err", err)
			}
		}
		if len(left) > 0 {
			return
		}
	}
	if _, err := r.out.post(ctx, d, connectors.Message{Text: strings.TrimSpace(interruptedNote)}); err != nil {
		r.log.Warn("tell of an interrupted answer", "channel", m.Channel, "err", err)
	}
}

// unfinishedLister is c's UnfinishedLister, behind the bot's redactor.
func unfinishedLister(c connectors.Connector) (connectors.UnfinishedLister, bool) {
	if rc, ok := c.(*redactedConn); ok {
		c = rc.Connector
	}
	l, ok := c.(connectors.UnfinishedLister)
	return l, ok
}

func cmpBool(x, y bool) int {
	switch {
	case x == y:
		return 0
	case x:
		return 1
	}
	return -1
}
