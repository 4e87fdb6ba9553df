package bot

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/opsbot/opsbot/bot/render"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/store"
)

// interruptedNote ends an answer a crash cut short.
const interruptedNote = "\n\n_(interrupted: opsbot restarted before this answer finished)_"

// silentNote tells a thread whose question a crash cut before any of its
// answer was shown.
const silentNote = "_(interrupted: opsbot restarted before it could answer here; ask again)_"

// recovery finishes, at start-up, what a crash left half done: answers
// left mid-stream are finalized with a note, turns left running are
// marked interrupted (a thread that saw nothing of its answer is told),
// and jobs left running are marked so and reported, never re-run. What
// could not be finished at once (a rate limit, a platform out of reach)
// is tried again by retry; an answer's record stays open until it is.
type recovery struct {
	store recoveryStore
	// interruptJobs marks the jobs a crash left running as interrupted.
	interruptJobs func(ctx context.Context) ([]hosts.Job, error)
	out           poster
	log           *slog.Logger

	mu   sync.Mutex
	left []func(ctx context.Context) error // each reports nil once done
}

// recoveryStore is what recovery reads and marks.
type recoveryStore interface {
	StreamingMessages(ctx context.Context) ([]store.PostedMessage, error)
	FinishStreaming(ctx context.Context, id int64) error
	RunningTurns(ctx context.Context) ([]store.Turn, error)
	EndTurn(ctx context.Context, id int64, status store.TurnStatus) (bool, error)
	Session(ctx context.Context, id int64) (store.Session, error)
}

// cutEnder is a connector that ends a message a crash cut without ever
// showing less than it shows: note goes after what the platform shows,
// read back when stored, the text on record, may be behind it
// (slack.Connector). An error means it is not ended yet.
type cutEnder interface {
	EndCut(ctx context.Context, ref connectors.Ref, stored, note string) error
}

// run does the whole recovery.
func (r *recovery) run(ctx context.Context) {
	told := r.finishAnswers(ctx)
	r.endTurns(ctx, told)
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

// endTurns marks the turns a crash left running as interrupted, and tells
// each thread where one had shown nothing yet (not in told, the threads
// whose cut answers carry the note): a question a crash cut is never left
// without a word.
func (r *recovery) endTurns(ctx context.Context, told map[threadID]bool) {
	turns, err := r.store.RunningTurns(ctx)
	if err != nil {
		r.log.Error("find interrupted turns", "err", err)
	}
	for _, t := range turns {
		r.store.EndTurn(ctx, t.ID, store.TurnInterrupted)
		sess, err := r.store.Session(ctx, t.SessionID)
		if err != nil {
			r.log.Warn("find the thread of an interrupted turn", "turn", t.ID, "err", err)
			continue
		}
		id := threadID{sess.Platform, sess.Channel, sess.Thread}
		if _, ok := r.out.conn(sess.Platform); !ok || told[id] {
			continue
		}
		told[id] = true
		d := connectors.Dest{Platform: sess.Platform, Workspace: sess.Workspace, Channel: sess.Channel, Thread: sess.Thread}
		r.try(ctx, func(ctx context.Context) error {
			_, err := r.out.post(ctx, d, connectors.Message{Text: silentNote})
			return err
		})
	}
}

// finishAnswers gives each answer a crash left mid-stream its last form,
// saying it was cut short; one whose platform is not configured now is
// kept for later. It returns the threads of those answers.
func (r *recovery) finishAnswers(ctx context.Context) map[threadID]bool {
	msgs, err := r.store.StreamingMessages(ctx)
	if err != nil {
		r.log.Error("find interrupted answers", "err", err)
	}
	// Answers whose post never returned come last: by then every answer
	// on record is finished, and what is still being written is theirs.
	slices.SortStableFunc(msgs, func(x, y store.PostedMessage) int { return cmpBool(x.Pending(), y.Pending()) })
	last := r.lastMessages(ctx, msgs)
	told := map[threadID]bool{}
	for _, m := range msgs {
		told[threadID{m.Platform, m.Channel, m.Thread}] = true
		c, ok := r.out.conn(m.Platform)
		if !ok {
			continue
		}
		if m.Pending() {
			r.finishUnrecorded(ctx, c, m)
			r.store.FinishStreaming(ctx, m.ID)
			continue
		}
		turn := last[m.ID]
		r.try(ctx, func(ctx context.Context) error {
			if err := endCut(ctx, c, m, turn); err != nil {
				r.log.Warn("finalize interrupted answer", "message", m.MessageID, "err", err)
				return err
			}
			return r.store.FinishStreaming(ctx, m.ID)
		})
	}
	return told
}

// lastMessages names, for each thread whose turn a crash cut, the last
// message on record of its answer (the newest record with a platform id:
// the one lowest in the thread), with that turn's feedback key
// (answerTurn): the answer ends there, and its feedback buttons go under
// it as under any final answer, a click kept with the stored turn.
func (r *recovery) lastMessages(ctx context.Context, msgs []store.PostedMessage) map[int64]string {
	turns, err := r.store.RunningTurns(ctx)
	if err != nil {
		r.log.Warn("find the turns of interrupted answers", "err", err)
	}
	turnOf := map[threadID]int64{}
	for _, t := range turns {
		sess, err := r.store.Session(ctx, t.SessionID)
		if err != nil {
			continue // endTurns says so
		}
		id := threadID{sess.Platform, sess.Channel, sess.Thread}
		turnOf[id] = max(turnOf[id], t.ID)
	}
	newest := map[threadID]int64{}
	for _, m := range msgs {
		id := threadID{m.Platform, m.Channel, m.Thread}
		if _, ok := turnOf[id]; ok && !m.Pending() {
			newest[id] = max(newest[id], m.ID)
		}
	}
	last := map[int64]string{}
	for id, m := range newest {
		last[m] = answerTurn(turnOf[id])
	}
	return last
}

// endCut ends answer m, cut by a crash, with the note: after what the
// platform shows where it can say (cutEnder), closing the task cards it
// left open where the platform has them (cardCutEnder), else over the
// text on record. The answer's last message (turn, its feedback key, set)
// gets its feedback buttons where the platform shows them
// (answerCutEnder).
func endCut(ctx context.Context, c connectors.Connector, m store.PostedMessage, turn string) error {
	ref := connectors.Ref{Platform: m.Platform, Channel: m.Channel, Thread: m.Thread, ID: m.MessageID}
	note := noteAfter(m.Text)
	// The record was redacted before it was shown.
	if e, ok := answerCutEnderOf(c); ok && turn != "" {
		return e.EndCutAnswer(ctx, ref, m.Text, note, cutCards(m.Cards), turn)
	}
	if e, ok := cardCutEnderOf(c); ok && len(m.Cards) > 0 {
		return e.EndCutCards(ctx, ref, m.Text, note, cutCards(m.Cards))
	}
	if e, ok := cutEnderOf(c); ok {
		return e.EndCut(ctx, ref, m.Text, note)
	}
	return finalize(ctx, c, ref, connectors.Message{Text: m.Text + note})
}

// noteAfter is the note that ends a cut answer showing text: below it, or
// alone (no blank lines above) when it showed no words yet.
func noteAfter(text string) string {
	if strings.TrimSpace(text) == "" {
		return strings.TrimSpace(interruptedNote)
	}
	return interruptedNote
}

// try does fn now; when it fails, fn is left for retry.
func (r *recovery) try(ctx context.Context, fn func(ctx context.Context) error) {
	if fn(ctx) == nil {
		return
	}
	r.mu.Lock()
	r.left = append(r.left, fn)
	r.mu.Unlock()
}

// retryRounds bounds how often retry tries again, its pauses doubling
// from a second to a minute (about seven minutes in all): what is left
// then waits for the next start, its record still open.
const retryRounds = 10

// retry tries again what run could not finish, with growing pauses, until
// it is all done, the rounds are spent, or ctx ends.
func (r *recovery) retry(ctx context.Context) {
	wait := time.Second
	for range retryRounds {
		r.mu.Lock()
		left := r.left
		r.left = nil
		r.mu.Unlock()
		if len(left) == 0 || !render.Sleep(ctx, wait) {
			return
		}
		for _, fn := range left {
			r.try(ctx, fn)
		}
		wait = min(2*wait, time.Minute)
	}
}

// finishUnrecorded settles an answer recorded before its post, whose post
// never returned before the crash: its platform id is unknown. A platform
// that keeps which messages are being written (connectors.UnfinishedLister)
// names it, and it is finished with the note; elsewhere, or when the post
// never arrived, the note is posted in the thread.
func (r *recovery) finishUnrecorded(ctx context.Context, c connectors.Connector, m store.PostedMessage) {
	d := connectors.Dest{Platform: m.Platform, Channel: m.Channel, Thread: m.Thread}
	if e, ok := unrecordedEnderOf(c); ok {
		ended, err := e.EndCutIn(ctx, d, interruptedNote)
		if err != nil {
			r.log.Warn("find an interrupted answer", "channel", m.Channel, "err", err)
		}
		if ended {
			return
		}
	}
	if l, ok := unfinishedLister(c); ok {
		left, err := l.Unfinished(ctx, d)
		if err != nil {
			r.log.Warn("find an interrupted answer", "channel", m.Channel, "err", err)
		}
		for _, s := range left {
			if err := finalize(ctx, c, s.Ref, connectors.Message{Text: s.Message.Text + noteAfter(s.Message.Text)}); err != nil {
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

// unrecordedEnder is a connector that finds, in a thread, a message a
// killed process was writing and never recorded, and ends it with note
// (slack.Connector: a live stream among the bot's newest messages). It
// reports whether it ended one.
type unrecordedEnder interface {
	EndCutIn(ctx context.Context, d connectors.Dest, note string) (bool, error)
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
