package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/alerts"
	"github.com/opsbot/opsbot/store"
)

// AlertRequester prefixes the requester of every alert investigation's
// turn (agent.SessionInfo.Requester is "alert:SOURCE"): what tells an
// alert turn from a person's, for budgets and the audit trail.
const AlertRequester = "alert:"

// IsAlertTurn says whether a turn's requester is an alert investigation.
func IsAlertTurn(sess agent.SessionInfo) bool {
	return strings.HasPrefix(sess.Requester, AlertRequester)
}

// Investigator runs alert investigations: an agent turn in the group's
// thread, at most MaxConcurrent at once, at most one per group within
// Cooldown. Its Agent must be one whose guard never waits for people
// (AlertProposals as its approver): read-only by construction.
type Investigator struct {
	Agent    turnAgent
	Sessions interface {
		SessionFor(ctx context.Context, key store.ThreadKey) (store.Session, bool, error)
		BeginTurn(ctx context.Context, sessionID int64) (store.Turn, error)
		EndTurn(ctx context.Context, id int64, status store.TurnStatus) (bool, error)
	}
	// Hosts is the inventory: host_labels' values are looked up in it.
	Hosts []agent.HostInfo
	// Memory is the incident memory an investigation's first prompt
	// recalls earlier incidents of the same alert from; nil: no recall.
	Memory    *store.Memory
	Proposals *AlertProposals
	// Threads hands each investigation its thread's turn, so that a
	// mention there waits for it (the bot; nil: it runs on its own).
	Threads ThreadHolder
	Metrics *alerts.Metrics
	Log     *slog.Logger

	desk    *AlertDesk
	mu      sync.Mutex
	running map[groupID]context.CancelFunc
	waiting []groupID
	closed  bool
	wg      sync.WaitGroup
	life    context.Context
	end     context.CancelFunc
}

// maxWaitingPer is how many investigations may wait per slot: past
// max_concurrent × this, a storm's groups are posted and not investigated.
const maxWaitingPer = 2

func (inv *Investigator) init() {
	if inv.running == nil {
		inv.running = map[groupID]context.CancelFunc{}
		inv.life, inv.end = context.WithCancel(context.Background())
		if inv.Log == nil {
			inv.Log = slog.Default()
		}
	}
}

// consider starts, queues or declines the group's investigation, saying
// which in its state. It runs under the group's lock, as a firing
// delivery is acted on.
func (inv *Investigator) consider(ctx context.Context, id groupID, g *store.AlertGroup, st *groupState, now time.Time) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	inv.init()
	cfg := inv.desk.d.Config
	switch s := st.Investigation.Status; {
	case inv.closed, s == statusRunning, s == statusQueued && slices.Contains(inv.waiting, id):
		return
	case !g.InvestigatedAt.IsZero() && now.Sub(g.InvestigatedAt) < cfg.Cooldown:
		if s == statusStopped {
			st.Investigation = investigationState{Status: statusNotRun, Why: fmt.Sprintf("investigated %s ago; alerts.cooldown is %s", spell(now.Sub(g.InvestigatedAt)), cfg.Cooldown)}
			inv.Metrics.NotInvestigated("cooldown")
		}
		return
	}
	if len(inv.running) < cfg.MaxConcurrent {
		st.Investigation = inv.begin(id, st, now)
		g.InvestigatedAt = now
		return
	}
	if len(inv.waiting) < cfg.MaxConcurrent*maxWaitingPer {
		inv.waiting = append(inv.waiting, id)
		inv.Metrics.Queued()
		st.Investigation = investigationState{Status: statusQueued, Why: fmt.Sprintf("%d investigations are running (alerts.max_concurrent: %d); %d ahead of this one",
			len(inv.running), cfg.MaxConcurrent, len(inv.waiting)-1)}
		return
	}
	inv.Metrics.NotInvestigated("storm")
	st.Investigation = investigationState{Status: statusNotRun, Why: fmt.Sprintf("an alert storm: %d investigations running and %d waiting (alerts.max_concurrent: %d); mention me in this thread to ask",
		len(inv.running), len(inv.waiting), cfg.MaxConcurrent)}
}

// begin starts the investigation of a group; inv.mu is held. Its state
// says it runs, on which hosts.
func (inv *Investigator) begin(id groupID, st *groupState, now time.Time) investigationState {
	ctx, cancel := context.WithCancel(inv.life)
	inv.running[id] = cancel
	inv.Metrics.Investigated()
	targets, unknown := inv.targets(st)
	inv.wg.Go(func() {
		defer inv.done(id)
		inv.run(ctx, id)
	})
	return investigationState{Status: statusRunning, Started: now, Targets: targets, Unknown: unknown}
}

// done frees the group's slot and starts the first waiting group.
func (inv *Investigator) done(id groupID) {
	inv.mu.Lock()
	if cancel := inv.running[id]; cancel != nil {
		cancel()
	}
	delete(inv.running, id)
	var next groupID
	ok := len(inv.waiting) > 0 && !inv.closed
	if ok {
		next, inv.waiting = inv.waiting[0], inv.waiting[1:]
	}
	inv.mu.Unlock()
	if ok {
		inv.desk.update(inv.life, next, func(g *store.AlertGroup, st *groupState) {
			inv.mu.Lock()
			defer inv.mu.Unlock()
			if g.Status == string(alerts.Resolved) || inv.closed {
				return
			}
			now := inv.desk.d.Now()
			st.Investigation, g.InvestigatedAt = inv.begin(next, st, now), now
		})
	}
}

// stop ends the group's investigation, running or waiting: the alert
// resolved. It says whether there was one.
func (inv *Investigator) stop(id groupID) bool {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	if i := slices.Index(inv.waiting, id); i >= 0 {
		inv.waiting = slices.Delete(inv.waiting, i, i+1)
		return true
	}
	cancel, ok := inv.running[id]
	if ok {
		cancel()
	}
	return ok
}

// close stops every investigation and waits for them.
func (inv *Investigator) close() {
	inv.mu.Lock()
	inv.init()
	inv.closed = true
	inv.waiting = nil
	inv.end()
	inv.mu.Unlock()
	inv.wg.Wait()
}

// targets are the inventory hosts the alerts' host_labels name, and the
// values that name none.
func (inv *Investigator) targets(st *groupState) (hosts, unknown []string) {
	for _, a := range st.Alerts {
		if a.Status != alerts.Firing {
			continue
		}
		for _, l := range inv.desk.d.Config.HostLabels {
			v := a.Labels[l]
			if v == "" {
				continue
			}
			name := hostPart(v)
			switch {
			case slices.ContainsFunc(inv.Hosts, func(h agent.HostInfo) bool { return h.Name == name }):
				hosts = appendNew(hosts, name)
			default:
				unknown = appendNew(unknown, v)
			}
		}
	}
	return hosts, unknown
}

// hostPart is a label value without its port (node1:9100 is node1).
func hostPart(v string) string {
	if h, _, err := net.SplitHostPort(v); err == nil {
		return h
	}
	return v
}

func appendNew(xs []string, x string) []string {
	if slices.Contains(xs, x) {
		return xs
	}
	return append(xs, x)
}

// run is one investigation: the agent's turn in the group's thread, its
// answer posted there, the root's summary kept up to date.
func (inv *Investigator) run(ctx context.Context, id groupID) {
	// The delivery that started it holds the group until its thread and
	// state are saved: wait for that.
	inv.desk.lock(id)()
	g, st, err := inv.desk.load(ctx, id)
	if err != nil || g.RootID == "" {
		inv.Log.Warn("an alert investigation found no thread", "source", id.source, "err", err)
		return
	}
	// A person's Stop in the thread ends the turn as it ends an answer:
	// with a short summary of what it found.
	ctx, stop := agent.Stoppable(ctx)
	defer stop(nil)
	if inv.Threads != nil {
		release, err := inv.Threads.HoldThread(ctx, threadDest(&g), stop)
		if err != nil {
			inv.finish(ctx, id, 0, "", err)
			return
		}
		defer release()
	}
	sess, _, err := inv.Sessions.SessionFor(ctx, store.ThreadKey{Platform: g.Platform, Workspace: g.Workspace, Channel: g.Channel, Thread: g.Thread})
	if err != nil {
		inv.finish(ctx, id, 0, "", err)
		return
	}
	if inv.Proposals != nil {
		inv.Proposals.bind(sess.ID, id, threadDest(&g))
		defer inv.Proposals.unbind(sess.ID)
	}
	info := agent.SessionInfo{ID: sess.ID, Requester: AlertRequester + id.source, Cwd: sess.Cwd, Platform: g.Platform, Channel: g.Channel, Kind: agent.KindAlert}
	var answer strings.Builder
	turn, ended := inv.recordTurn(ctx, sess.ID)
	defer func() { ended(err) }()
	err = inv.Agent.Turn(ctx, info, investigationPrompt(id, st, inv.Memory), func(e agent.Event) {
		switch e.Kind {
		case agent.TextDelta:
			answer.WriteString(e.Text)
		case agent.ToolFinished:
			inv.noteRuns(ctx, id, e.Runs)
		}
	})
	if text := strings.TrimSpace(answer.String()); text != "" && (ctx.Err() == nil || stoppedBy(ctx, err) != "") {
		if _, perr := inv.desk.d.Platforms.post(context.WithoutCancel(ctx), threadDest(&g), connectors.Message{Text: text}); perr != nil {
			inv.Log.Warn("post an alert investigation's answer", "err", perr)
		}
	}
	inv.finish(ctx, id, turn, answer.String(), err)
}

// recordTurn notes the investigation's turn in the store as a person's
// question's turn is noted, so that `opsbot sessions list`, the web
// chat's thread list and a restart's recovery see it. It returns the
// turn's id (0 when it could not be noted: the summary then takes no
// feedback), and a func that records how it ended.
func (inv *Investigator) recordTurn(ctx context.Context, session int64) (int64, func(error)) {
	t, err := inv.Sessions.BeginTurn(ctx, session)
	if err != nil {
		inv.Log.Warn("record an alert investigation's turn", "err", err)
		return 0, func(error) {}
	}
	return t.ID, func(err error) {
		status := store.TurnDone
		switch {
		case stoppedBy(ctx, err) != "" || ctx.Err() != nil:
			status = store.TurnCancelled
		case err != nil:
			status = store.TurnFailed
		}
		if _, err := inv.Sessions.EndTurn(context.WithoutCancel(ctx), t.ID, status); err != nil {
			inv.Log.Warn("record an alert investigation's end", "err", err)
		}
	}
}

// noteRuns adds the commands a tool ran to the summary's evidence.
func (inv *Investigator) noteRuns(ctx context.Context, id groupID, runs []agent.CommandRun) {
	if len(runs) == 0 {
		return
	}
	inv.desk.update(context.WithoutCancel(ctx), id, func(_ *store.AlertGroup, st *groupState) {
		for _, r := range runs {
			e := evidence{Host: r.Host, Command: r.Command, Exit: r.ExitCode}
			switch {
			case r.Err != "":
				e.Failed = "did not run: " + r.Err
			case r.Killed:
				e.Failed = "killed at its time limit"
			}
			st.Investigation.Evidence = append(st.Investigation.Evidence, e)
		}
	})
}

// finish gives the summary its last form: the cause and next steps the
// answer named, or how the investigation ended; turn is the
// investigation's stored turn (recordTurn), which the summary's feedback
// names.
func (inv *Investigator) finish(ctx context.Context, id groupID, turn int64, answer string, err error) {
	inv.desk.update(context.WithoutCancel(ctx), id, func(g *store.AlertGroup, st *groupState) {
		i := &st.Investigation
		i.Turn = turn
		switch {
		case stoppedBy(ctx, err) != "":
			i.Status, i.Why = statusStopped, stoppedBy(ctx, err)
		case g.Status == string(alerts.Resolved) || ctx.Err() != nil:
			i.Status = statusStopped
		case err != nil:
			i.Status, i.Why = statusFailed, failureWords(err)
		default:
			i.Status = statusDone
		}
		i.Cause, i.Next = answerLine(answer, "Suspected cause:"), answerLine(answer, "Next steps:")
	})
}

// stoppedBy says who stopped the investigation ("stopped by @name"), or
// "" when no person did.
func stoppedBy(ctx context.Context, err error) string {
	var by approvals.StoppedBy
	if (errors.Is(err, agent.ErrStopped) || errors.Is(err, context.Canceled)) && errors.As(context.Cause(ctx), &by) {
		return by.Error()
	}
	return ""
}

// failureWords says why an investigation failed, without Go's chain.
func failureWords(err error) string {
	var model agent.ModelError
	var over *agent.BudgetError
	switch {
	case errors.As(err, &over):
		return fmt.Sprintf("it reached its token budget of %d tokens (agent.budget.%s)", over.Limit, over.Scope)
	case errors.As(err, &model):
		return "the model: " + model.Error()
	case errors.Is(err, agent.ErrMaxSteps):
		return "it used all its steps (agent.max_steps)"
	case errors.Is(err, agent.ErrDeadline):
		return "it reached its time limit (agent.turn_timeout)"
	}
	id := errorID()
	slog.Default().Warn("an alert investigation failed", "id", id, "err", err)
	return "internal error, id " + id + " (the operator's log has it)"
}

// answerLine is the text after the last line of the answer that starts
// with prefix, made inert.
func answerLine(answer, prefix string) string {
	lines := strings.Split(answer, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimLeft(strings.TrimSpace(lines[i]), "*_ ")
		if rest, ok := strings.CutPrefix(l, prefix); ok {
			return plainText(strings.Trim(rest, "*_ "), 300)
		}
	}
	return ""
}
