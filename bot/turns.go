package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/bot/render"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/store"
)

// streams opens answers' streams into threads: a Renderer on the
// event's platform, within its workspace's edit budget, recorded for
// recovery, its gaps between updates counted.
type streams struct {
	*Platforms
	rec     render.StreamRecorder
	metrics *Metrics
	log     *slog.Logger
}

// renderer starts a stream into the event's thread; done waits for it.
func (s *streams) renderer(ctx context.Context, ev connectors.Event, withStop bool) (*render.Renderer, func()) {
	c, _ := s.conn(ev.Platform)
	var buttons []connectors.Button
	if withStop {
		buttons = []connectors.Button{{ActionID: ActionStop, Value: threadOf(ev).String(), Label: "Stop", Style: connectors.StyleDanger}}
	}
	r := render.NewRenderer(s.lifeCtx(ctx), c, s.budget(ev.Platform, ev.Workspace), s.rec, s.log, destOf(ev), buttons...)
	r.ObserveGaps(s.metrics.gaps(ev.Platform))
	return r, func() { r.Close(context.Background(), nil) }
}

// answers runs agent turns in threads: the model's answer streams into
// the thread, its approval cards are posted as it asks, the commands it
// ran are listed after it, and how it ended is said in words. Its way out
// (answerOut) is embedded: a chat `run` streams and replies through
// answers too (runTurns).
type answers struct {
	answerOut
	// agent answers; nil when no model is configured, and noAgentHelp
	// says how to turn it on.
	agent       turnAgent
	noAgentHelp string
	turns       turnRecords
	// recordFollowUp records what the decision on a request a turn waits
	// on leads to (the store's RecordFollowUp).
	recordFollowUp func(ctx context.Context, f store.FollowUp) error
	cards          approvalCards
	metrics        *Metrics
	log            *slog.Logger
}

// turnRecords records agent turns: a turn still "running" at start-up was
// cut by a crash.
type turnRecords interface {
	BeginTurn(ctx context.Context, sessionID int64) (store.Turn, error)
	EndTurn(ctx context.Context, id int64, status store.TurnStatus) (bool, error)
}

// turnAgent runs the model's turns (agent.Agent does).
type turnAgent interface {
	Turn(ctx context.Context, sess agent.SessionInfo, text string, emit func(agent.Event)) error
	Resume(ctx context.Context, sess agent.SessionInfo, emit func(agent.Event)) (resumed bool, err error)
}

// answerOut is where answers show: streams into threads, plain replies,
// and the life of the bot's requests to platforms.
type answerOut interface {
	poster
	renderer(ctx context.Context, ev connectors.Event, withStop bool) (*render.Renderer, func())
	lifeCtx(ctx context.Context) context.Context
}

// approvalCards posts a request's card and shows the decisions on the
// cards that still offer buttons: the thread's, or all.
type approvalCards interface {
	post(ctx context.Context, ev connectors.Event, id string)
	refresh(ctx context.Context, ev connectors.Event)
	refreshAll(ctx context.Context)
}

var (
	_ turnAgent     = (*agent.Agent)(nil)
	_ answerOut     = (*streams)(nil)
	_ approvalCards = (*cards)(nil)
	_ runTurns      = (*answers)(nil)
)

// emitter turns agent events into what the thread shows. spec is set for a
// chat `run`, whose approval's follow-up is to run it; ran, for an agent
// turn, collects the commands it runs.
func (an *answers) emitter(ctx context.Context, ev connectors.Event, sess agent.SessionInfo, r *render.Renderer, spec *runSpec, ran *ranList) func(agent.Event) {
	return func(e agent.Event) {
		switch e.Kind {
		case agent.TextDelta:
			r.Write(e.Text)
		case agent.ToolStarted:
			if spec != nil {
				return // a chat `run` shows its own "running" line
			}
			if e.Limit > 0 {
				r.TaskLimit(e.Limit) // the life its card needs in a stream
			}
			if !r.Task(startedTask(e)) {
				r.Status(e.Summary, false)
			}
		case agent.ToolFinished:
			mark := "✓"
			if e.IsError {
				mark = "✗"
			}
			ran.add(e.Runs...)
			if r.Task(finishedTask(e)) {
				an.cards.refresh(ctx, ev)
				return
			}
			line := fmt.Sprintf("%s %s: %s", mark, e.Tool, e.Summary)
			if len(e.Runs) == 1 {
				line = fmt.Sprintf("%s `%s` on %s: %s", mark, oneLine(e.Runs[0].Command), e.Runs[0].Host, e.Summary)
			}
			r.Status(line, true)
			an.cards.refresh(ctx, ev)
		case agent.Notice:
			if strings.Contains(e.Text, ", retrying in ") { // a retried model call (agent's retryText): a wait, gone when the answer ends
				r.Waiting(e.Text)
				return
			}
			r.Status(e.Text, false)
		case agent.ApprovalPending:
			// The tool's "running …" line would claim a run that waits
			// for people: until they decide, the line says so.
			r.Waiting(fmt.Sprintf("waiting for approval to run `%s` on %s", oneLine(e.Approval.Command), e.Approval.Target))
			if spec == nil { // an agent's tool call: its card waits too
				r.Task(pendingTask(e))
			}
			// What the decision is for is on disk before anyone can see
			// the card: a decision that comes after a restart still
			// leads to the run, or to a message saying why not.
			if err := an.recordFollowUp(context.WithoutCancel(ctx), followUpOf(sess, e.Approval, spec)); err != nil {
				an.log.Error("record approval follow-up", "err", err)
			}
			if !e.Approval.Reattached {
				an.cards.post(an.lifeCtx(ctx), ev, e.Approval.ID)
			}
		}
	}
}

// answer is an agent's answer streamed into a thread: its stream, how the
// turn ended, and the commands it ran.
type answer struct {
	r   *render.Renderer
	err error
	ran *ranList
}

// turn runs the agent on the event's text and streams the answer.
func (an *answers) turn(ctx context.Context, ev connectors.Event, sess agent.SessionInfo) {
	if a := an.stream(ctx, ev, sess); a != nil {
		an.end(ctx, ev, a)
	}
}

// stream runs the agent on the event's text, streaming the answer into
// the thread (the turn stage); end gives it its last form (the render
// stage). With no model it answers how to turn one on, and returns nil.
func (an *answers) stream(ctx context.Context, ev connectors.Event, sess agent.SessionInfo) *answer {
	if an.agent == nil {
		an.reply(ctx, ev, an.noAgentHelp)
		return nil
	}
	r, _ := an.renderer(ctx, ev, true)
	turn, record := an.record(ctx, sess)
	r.Feedback(answerTurn(turn))
	ran := &ranList{}
	err := an.agent.Turn(ctx, sess, ev.Text, an.emitter(ctx, ev, sess, r, nil, ran))
	record(err)
	return &answer{r: r, err: err, ran: ran}
}

// end closes an answer's stream saying how it ended, and lists what it
// ran.
func (an *answers) end(ctx context.Context, ev connectors.Event, a *answer) {
	an.finish(ctx, ev, a.r, a.err)
	a.ran.show(an.lifeCtx(ctx), an, ev)
}

// record notes a running turn in the store, and returns its id (0 if it
// could not) and a func that records how it ended. A turn still
// "running" at start-up was cut by a crash.
func (an *answers) record(ctx context.Context, sess agent.SessionInfo) (int64, func(error)) {
	start := time.Now()
	t, err := an.turns.BeginTurn(ctx, sess.ID)
	if err != nil {
		an.log.Warn("record turn", "err", err)
	}
	return t.ID, func(err error) {
		status := store.TurnDone
		switch {
		case errors.Is(err, context.Canceled):
			status = store.TurnCancelled
		case err != nil:
			status = store.TurnFailed
		}
		an.metrics.turnEnded(status, time.Since(start))
		if t.ID != 0 {
			an.turns.EndTurn(context.WithoutCancel(ctx), t.ID, status)
		}
	}
}

// resume continues an agent turn cut by a restart, once its approval
// is decided. It reports false when the history holds no call to resume
// (a newer message settled it); then nothing is posted.
func (an *answers) resume(ctx context.Context, ev connectors.Event, sess agent.SessionInfo) bool {
	r, _ := an.renderer(ctx, ev, true)
	turn, end := an.record(ctx, sess)
	r.Feedback(answerTurn(turn)) // a resumed answer ends as any other: with its feedback buttons
	ran := &ranList{}
	resumed, err := an.agent.Resume(ctx, sess, an.emitter(ctx, ev, sess, r, nil, ran))
	end(err)
	an.finish(ctx, ev, r, err)
	ran.show(an.lifeCtx(ctx), an, ev)
	return resumed || err != nil
}

// finish closes an answer's stream, saying in words how it ended: stopped
// (by whom: the answer is then the model's summary, or what ran), cut by a
// restart, out of steps, time or tokens, or failed (with an id the
// operator's log has).
func (an *answers) finish(ctx context.Context, ev connectors.Event, r *render.Renderer, err error) {
	an.cards.refresh(an.lifeCtx(ctx), ev)
	var stop approvals.StoppedBy
	var over *agent.BudgetError
	switch {
	case errors.Is(err, context.Canceled) && errors.Is(context.Cause(ctx), agent.ErrShutdown):
		err = errors.New("interrupted: opsbot is restarting. A pending approval still counts: once it is decided, what it approves runs, or this thread is told why not")
	case errors.Is(err, agent.ErrStopped) && errors.As(context.Cause(ctx), &stop):
		err = stop // the answer above is its summary, and is kept
	case errors.Is(err, agent.ErrStopped):
		err = errors.New("stopped")
	case errors.Is(err, context.Canceled) && errors.As(context.Cause(ctx), &stop):
		err = fmt.Errorf("%s; this answer is not kept in the conversation", stop.Error())
	case errors.Is(err, context.Canceled):
		err = errors.New("stopped; this answer is not kept in the conversation")
	case errors.Is(err, agent.ErrMaxSteps):
		err = errors.New("stopped: this answer used all the steps one answer may take; ask again, or ask something narrower")
	case errors.Is(err, agent.ErrDeadline):
		err = errors.New("stopped: this answer reached its time limit")
	case errors.As(err, &over):
		err = budgetText(over)
	case err != nil:
		id := errorID()
		an.log.Warn("turn ended with an error", "thread", threadOf(ev), "id", id, "err", err)
		err = failureText(err, id)
	}
	r.Close(context.WithoutCancel(ctx), err)
}

// budgetText says which token budget ended an answer.
func budgetText(over *agent.BudgetError) error {
	if over.Scope == agent.BudgetThreadDay {
		return fmt.Errorf("stopped: this thread reached its token budget for the day (%d tokens); it starts again at 00:00 UTC", over.Limit)
	}
	return fmt.Errorf("stopped: this answer reached its token budget of %d tokens", over.Limit)
}

// failureText words a failed answer with an id the operator's log has:
// the model API's own sentence when it said what went wrong (a rate limit
// and its wait, an overload, a server fault, a cut stream, a refused key),
// with its advice; any other failure (the store, a bug) only that the
// answer failed.
func failureText(err error, id string) error {
	var model agent.ModelError
	if errors.As(err, &model) {
		return fmt.Errorf("the answer failed: %s (error id %s)", model.Error(), id)
	}
	return fmt.Errorf("the answer failed (error id %s; the operator's log has the details); ask again", id)
}

// closeRefused ends a chat `run` that did not run: a refusal (policy,
// approval) is for people as it is; a stop or restart says so.
func (an *answers) closeRefused(ctx context.Context, ev connectors.Event, r *render.Renderer, err error) {
	if errors.Is(err, context.Canceled) {
		an.finish(ctx, ev, r, err)
		return
	}
	an.cards.refresh(an.lifeCtx(ctx), ev)
	r.Close(context.WithoutCancel(ctx), err)
}
