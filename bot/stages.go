package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/store"
)

// recordStage writes the event to the store's inbox (design §1.8: record,
// then acknowledge, then act): an event not on record is refused.
type recordStage struct {
	// record writes an event to the inbox (the store's RecordEvent),
	// reporting whether it is new there.
	record func(ctx context.Context, platform, eventID string, event []byte) (id int64, first bool, err error)
	log    *slog.Logger
}

// Exec records w's event within ctx.
func (s recordStage) Exec(ctx context.Context, w *work) error {
	data, err := json.Marshal(inboxRecord{Event: w.ev, JobEnd: w.jobEnd})
	if err != nil {
		return fmt.Errorf("%w: %v", connectors.ErrNotRecorded, err)
	}
	w.inboxID, w.first, err = s.record(ctx, w.ev.Platform, w.ev.ID, data)
	if err != nil {
		s.log.Error("an event could not be recorded; it was not taken", "platform", w.ev.Platform, "err", err)
		return notRecorded(err)
	}
	return nil
}

// dedupeStage drops a platform's retry of an event already on record
// (counted as a duplicate): it is acted on once.
type dedupeStage struct{ metrics *Metrics }

// Exec ends the line for a retry.
func (s dedupeStage) Exec(_ context.Context, w *work) error {
	if w.first {
		return nil
	}
	s.metrics.event(w.ev, true)
	return errDone
}

// admitStage lets through what is for the bot from whom bot.access lets
// talk: a click or a message from someone it does not let is answered
// (a message only when it mentions the bot), and goes no further; a
// message in a thread without the bot is not for it (thread_replies).
type admitStage struct {
	cfg Config
	// busy reports whether a thread has work running or queued.
	busy func(id threadID) bool
	// hasSession reports whether a thread has a session.
	hasSession func(ctx context.Context, key store.ThreadKey) (bool, error)
	out        *Platforms
	crew       *crew
	metrics    *Metrics
	log        *slog.Logger
}

// Exec admits w or ends its line.
func (s admitStage) Exec(ctx context.Context, w *work) error {
	if w.jobEnd {
		return nil // a job's end asked for this turn: no person's message to check
	}
	ev := w.ev
	s.metrics.event(ev, false)
	switch ev.Kind {
	case connectors.EventAction:
		if !s.cfg.allowed(ev.Channel, ev.User.ID) {
			// The same rule as for messages: a button is no way around it.
			s.crew.do(func() {
				respond(s.out.lifeCtx(ctx), s.out, ev, "You may not use opsbot in this channel; ask an admin to add you to bot.access.")
			})
			return errDone
		}
		return nil
	case connectors.EventMessage:
		if !s.forBot(ctx, ev) {
			return errDone
		}
		if !s.cfg.allowed(ev.Channel, ev.User.ID) {
			if ev.Mention { // else people may talk in the thread without the bot
				s.crew.do(func() {
					s.out.reply(s.out.lifeCtx(ctx), ev, fmt.Sprintf("Sorry %s, you may not use opsbot in this channel; ask an admin to add you to bot.access.", ev.User.Name))
				})
			}
			return errDone
		}
		return nil
	}
	return errDone
}

// forBot reports whether a message is for the bot: a mention is; under
// bot.thread_replies: addressed, so is a message in a thread where the bot
// has a session (or work queued), unless it mentions someone else.
func (s admitStage) forBot(ctx context.Context, ev connectors.Event) bool {
	if ev.Mention {
		return true
	}
	if ev.MentionsOthers || s.cfg.WithDefaults().ThreadReplies != ThreadRepliesAddressed {
		return false
	}
	id := threadOf(ev)
	if s.busy(id) {
		return true
	}
	has, err := s.hasSession(ctx, store.ThreadKey{Platform: id.platform, Workspace: ev.Workspace, Channel: id.channel, Thread: id.thread})
	if err != nil {
		s.log.Error("look up the thread's session", "err", err)
	}
	return has
}

// routeStage sends a click to its button's work and a stop to the
// thread's running work, at once; a message goes on to its thread's queue
// (stopping the running turn first under bot.on_busy: cancel).
type routeStage struct {
	threads     *threads
	may         approvers
	cancelOnNew bool
	// click acts on a button; finished records the click's inbox row done.
	click    func(ctx context.Context, ev connectors.Event)
	finished func(ctx context.Context, inboxID int64)
	// approvals answers `approvals` and `approvals revoke N` at once, not
	// queued behind the thread's running turn: a grant a person revokes
	// must end before that turn's next command (nil: queued like any).
	approvals func(ctx context.Context, ev connectors.Event)
	out       *Platforms
	crew      *crew
}

// Exec routes w.
func (s routeStage) Exec(ctx context.Context, w *work) error {
	ev := w.ev
	switch {
	case w.jobEnd:
		return nil
	case ev.Kind == connectors.EventAction:
		// The click is done once its vote is: a crash before then leaves
		// it open, for the next start.
		w.handed = s.crew.goOK(func() {
			s.click(s.out.lifeCtx(ctx), ev)
			s.finished(ctx, w.inboxID)
		})
		return errDone
	case isStop(ev.Text):
		if why := stopRefusal(s.threads, s.may, threadOf(ev), ev); why != "" {
			s.crew.do(func() { s.out.reply(s.out.lifeCtx(ctx), ev, why) })
			return errDone
		}
		s.threads.stop(threadOf(ev), stopperOf(ev))
		return errDone
	case s.approvals != nil && isApprovalsLine(ev.Text):
		w.handed = s.crew.goOK(func() {
			s.approvals(s.out.lifeCtx(ctx), ev)
			s.finished(ctx, w.inboxID)
		})
		return errDone
	}
	if s.cancelOnNew {
		s.threads.stop(threadOf(ev), stopperOf(ev))
	}
	return nil
}

// queueStage puts the work in its thread's queue, saying so when it waits
// behind other work, and turning a message away, in words, when the bot
// is full. A job's end is never turned away; not queued while shutting
// down, it is the next start's.
type queueStage struct {
	enqueue func(id threadID, q queued) (behind, ok bool, full string)
	// note is what a message waiting in thread id is told (nil: queuedNote).
	note func(id threadID) string
	out  *Platforms
	crew *crew
}

// Exec queues w.
func (s queueStage) Exec(ctx context.Context, w *work) error {
	ev := w.ev
	behind, ok, full := s.enqueue(threadOf(ev), queued{ev: ev, inboxID: w.inboxID, jobEnd: w.jobEnd, replayed: !w.first, notice: w.notice})
	if w.jobEnd {
		w.handed = true // its row stays open for the next start when not queued
		return nil
	}
	switch {
	case full != "":
		// Turned away, and told so: never dropped in silence.
		s.crew.do(func() { s.out.reply(s.out.lifeCtx(ctx), ev, "Not taken: "+full+".") })
	case behind && w.first:
		// A message a previous process recorded (replayed by this start)
		// was told when it came: not again.
		note := queuedNote
		if s.note != nil {
			note = s.note(threadOf(ev))
		}
		s.crew.do(func() { s.out.reply(s.out.lifeCtx(ctx), ev, note) })
	}
	w.handed = ok
	return nil
}

// sessionStage opens the thread's session and first acts on the decided
// approvals nothing acted on yet; the follow-up of one is all its work.
type sessionStage struct {
	open func(ctx context.Context, ev connectors.Event) (agent.SessionInfo, error)
	// act acts on one decided approval; first on every one the session
	// has before a new message.
	act   func(ctx context.Context, ev connectors.Event, sess agent.SessionInfo, approvalID string)
	first func(ctx context.Context, ev connectors.Event, sess agent.SessionInfo)
	out   replier
	log   *slog.Logger
}

// Exec opens w's session.
func (s sessionStage) Exec(ctx context.Context, w *work) error {
	sess, err := s.open(ctx, w.ev)
	if err != nil {
		internalError(ctx, s.out, s.log, w.ev, err)
		return errDone
	}
	w.sess = sess
	if w.followUp != "" {
		s.act(ctx, w.ev, sess, w.followUp)
		return errDone
	}
	s.first(ctx, w.ev, sess)
	return nil
}

// turnStage answers a message: a question, or anything that is not a chat
// command while the agent is on, is an agent turn streamed into the
// thread (ended by the render stage); `run` and the chat commands answer
// themselves.
type turnStage struct {
	agentOn bool
	stream  func(ctx context.Context, ev connectors.Event, sess agent.SessionInfo) *answer
	run     func(ctx context.Context, ev connectors.Event, sess agent.SessionInfo, args string)
	command func(ctx context.Context, ev connectors.Event, sess agent.SessionInfo, word, rest string) bool
}

// Exec answers w.
func (s turnStage) Exec(ctx context.Context, w *work) error {
	ev := w.ev
	if ev.Question {
		w.answer = s.stream(ctx, ev, w.sess)
		return nil
	}
	word, rest := firstWord(ev.Text)
	switch {
	case strings.EqualFold(word, "run"):
		s.run(ctx, ev, w.sess, rest)
		return errDone
	case s.agentOn && !commandLine(word, rest):
		w.answer = s.stream(ctx, ev, w.sess) // "help me read this log" is a question
		return nil
	case s.command(ctx, ev, w.sess, word, rest):
		return errDone
	}
	w.answer = s.stream(ctx, ev, w.sess)
	return nil
}

// renderStage gives an agent's answer its last form: how it ended, in
// words, and what it ran.
type renderStage struct {
	end func(ctx context.Context, ev connectors.Event, a *answer)
}

// Exec ends w's answer, if the turn streamed one.
func (s renderStage) Exec(ctx context.Context, w *work) error {
	if w.answer != nil {
		s.end(ctx, w.ev, w.answer)
	}
	return nil
}

// finishStage ends a piece of a thread's work, however far it went: the
// settled watch is asked to look.
type finishStage struct {
	kick func()
}

// Exec finishes w.
func (s finishStage) Exec(ctx context.Context, _ *work) error {
	s.kick()
	return nil
}
