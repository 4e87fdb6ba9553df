package bot

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/store"
)

// ActionStop is the Stop button's action id; its value is the thread.
const ActionStop = "stop"

// stoppedBy is the cancel cause of a turn a person stopped (a shutdown's is
// agent.ErrShutdown).
type stoppedBy struct {
	Person approvals.Person
	Name   string
}

func (s stoppedBy) Error() string { return "stopped by @" + s.Name }

// renderer starts a stream into the event's thread; done waits for it.
func (b *Bot) renderer(ctx context.Context, ev connectors.Event, withStop bool) (*Renderer, func()) {
	c, _ := b.conn(ev.Platform)
	var buttons []connectors.Button
	if withStop {
		buttons = []connectors.Button{{ActionID: ActionStop, Value: threadOf(ev).String(), Label: "Stop", Style: connectors.StyleDanger}}
	}
	r := NewRenderer(b.lifeCtx(ctx), c, b.budget(ev.Platform, ev.Workspace), b.Store, b.log(), destOf(ev), buttons...)
	r.ObserveGaps(b.Metrics.gaps(ev.Platform))
	return r, func() { r.Close(context.Background(), nil) }
}

// emitter turns agent events into what the thread shows. spec is set for a
// chat `run`, whose approval's follow-up is to run it; ran, for an agent
// turn, collects the commands it runs.
func (b *Bot) emitter(ctx context.Context, ev connectors.Event, sess agent.SessionInfo, r *Renderer, spec *runSpec, ran *ranList) func(agent.Event) {
	return func(e agent.Event) {
		switch e.Kind {
		case agent.TextDelta:
			r.Write(e.Text)
		case agent.ToolStarted:
			r.Status(e.Summary, false)
		case agent.ToolFinished:
			mark := "✓"
			if e.IsError {
				mark = "✗"
			}
			ran.add(e.Runs...)
			line := fmt.Sprintf("%s %s: %s", mark, e.Tool, e.Summary)
			if len(e.Runs) == 1 {
				line = fmt.Sprintf("%s `%s` on %s: %s", mark, oneLine(e.Runs[0].Command), e.Runs[0].Host, e.Summary)
			}
			r.Status(line, true)
			b.cards().refresh(ctx, ev)
		case agent.Notice:
			r.Status(e.Text, false)
		case agent.ApprovalPending:
			// The tool's "running …" line would claim a run that waits
			// for people: until they decide, the line says so.
			r.Status(fmt.Sprintf("waiting for approval to run `%s` on %s", oneLine(e.Approval.Command), e.Approval.Target), true)
			// What the decision is for is on disk before anyone can see
			// the card: a decision that comes after a restart still
			// leads to the run, or to a message saying why not.
			if err := b.Store.RecordFollowUp(context.WithoutCancel(ctx), followUpOf(sess, e.Approval, spec)); err != nil {
				b.log().Error("record approval follow-up", "err", err)
			}
			if !e.Approval.Reattached {
				b.cards().post(b.lifeCtx(ctx), ev, e.Approval.ID)
			}
		}
	}
}

// turn runs the agent on the event's text and streams the answer.
func (b *Bot) turn(ctx context.Context, ev connectors.Event, sess agent.SessionInfo) {
	if b.Agent == nil {
		b.reply(ctx, ev, b.NoAgentHelp)
		return
	}
	r, _ := b.renderer(ctx, ev, true)
	end := b.recordTurn(ctx, sess)
	ran := &ranList{}
	err := b.Agent.Turn(ctx, sess, ev.Text, b.emitter(ctx, ev, sess, r, nil, ran))
	end(err)
	b.finishTurn(ctx, ev, r, err)
	ran.show(b.lifeCtx(ctx), b, ev)
}

// recordTurn notes a running turn in the store; the returned func records
// how it ended. A turn still "running" at start-up was cut by a crash.
func (b *Bot) recordTurn(ctx context.Context, sess agent.SessionInfo) func(error) {
	start := time.Now()
	t, err := b.Store.BeginTurn(ctx, sess.ID)
	if err != nil {
		b.log().Warn("record turn", "err", err)
	}
	return func(err error) {
		status := store.TurnDone
		switch {
		case errors.Is(err, context.Canceled):
			status = store.TurnCancelled
		case err != nil:
			status = store.TurnFailed
		}
		b.Metrics.turnEnded(status, time.Since(start))
		if t.ID != 0 {
			b.Store.EndTurn(context.WithoutCancel(ctx), t.ID, status)
		}
	}
}

// resumeAgent continues an agent turn cut by a restart, once its approval
// is decided. It reports false when the history holds no call to resume
// (a newer message settled it); then nothing is posted.
func (b *Bot) resumeAgent(ctx context.Context, ev connectors.Event, sess agent.SessionInfo) bool {
	r, _ := b.renderer(ctx, ev, true)
	end := b.recordTurn(ctx, sess)
	ran := &ranList{}
	resumed, err := b.Agent.Resume(ctx, sess, b.emitter(ctx, ev, sess, r, nil, ran))
	end(err)
	b.finishTurn(ctx, ev, r, err)
	ran.show(b.lifeCtx(ctx), b, ev)
	return resumed || err != nil
}

func (b *Bot) finishTurn(ctx context.Context, ev connectors.Event, r *Renderer, err error) {
	b.cards().refresh(b.lifeCtx(ctx), ev)
	var stop stoppedBy
	switch {
	case errors.Is(err, context.Canceled) && errors.Is(context.Cause(ctx), agent.ErrShutdown):
		err = errors.New("interrupted: opsbot is restarting. A pending approval still counts: once it is decided, what it approves runs, or this thread is told why not")
	case errors.Is(err, context.Canceled) && errors.As(context.Cause(ctx), &stop):
		err = fmt.Errorf("%s; this answer is not kept in the conversation", stop.Error())
	case errors.Is(err, context.Canceled):
		err = errors.New("stopped; this answer is not kept in the conversation")
	case errors.Is(err, agent.ErrMaxSteps):
		err = errors.New("stopped: this answer used all the steps one answer may take; ask again, or ask something narrower")
	case errors.Is(err, agent.ErrDeadline):
		err = errors.New("stopped: this answer reached its time limit")
	case err != nil:
		// The model's service or the store failed: the person sees that
		// and an id, the operator's log the error.
		id := errorID()
		b.log().Warn("turn ended with an error", "thread", threadOf(ev), "id", id, "err", err)
		err = fmt.Errorf("the answer failed (error id %s; the operator's log has the details); ask again", id)
	}
	r.Close(context.WithoutCancel(ctx), err)
}

// closeRefused ends a chat `run` that did not run: a refusal (policy,
// approval) is for people as it is; a stop or restart says so.
func (b *Bot) closeRefused(ctx context.Context, ev connectors.Event, r *Renderer, err error) {
	if errors.Is(err, context.Canceled) {
		b.finishTurn(ctx, ev, r, err)
		return
	}
	b.cards().refresh(b.lifeCtx(ctx), ev)
	r.Close(context.WithoutCancel(ctx), err)
}
