package bot

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/alerts"
	"github.com/opsbot/opsbot/store"
)

// Alerts in (issue 29): the desk acts on the deliveries the intake
// recorded (alert_deliveries), oldest first, one at a time: each belongs
// to an alert group, and each group has one thread whose root message is
// the group's summary, posted on its first delivery and edited after.
// A delivery is marked acted on in the same transaction that saves its
// group, so a crash between the two acts on it again at the next start,
// which changes nothing when its thread already shows it.

// AlertStore keeps alert deliveries and groups (*store.Alerts).
type AlertStore interface {
	OpenDeliveries(ctx context.Context, limit int) ([]store.AlertDelivery, error)
	FinishDelivery(ctx context.Context, id int64) error
	AlertGroup(ctx context.Context, source, key string) (store.AlertGroup, error)
	FiringAlertGroups(ctx context.Context) ([]store.AlertGroup, error)
	SaveAlertGroup(ctx context.Context, g store.AlertGroup, delivery int64) error
	ForgetAlertDeliveriesBefore(ctx context.Context, t time.Time) (int64, error)
}

var _ AlertStore = (*store.Alerts)(nil)

// AlertDeps is what the desk is built over.
type AlertDeps struct {
	Store     AlertStore
	Platforms *Platforms
	Config    alerts.Config
	// Investigator runs the investigations; nil when no model is
	// configured (the threads are kept all the same).
	Investigator *Investigator
	Metrics      *alerts.Metrics
	Log          *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
	// DeliveriesKept is how long a delivery acted on stays on record
	// (default: as long as the bot keeps event ids, 3 days).
	DeliveriesKept time.Duration
}

// AlertDesk keeps one thread per alert group.
type AlertDesk struct {
	d    AlertDeps
	kick chan struct{}
	// locks serialise the updates of one group's root (the desk's and its
	// investigation's).
	locks sync.Map // groupID → *sync.Mutex
	wg    sync.WaitGroup
	stop  context.CancelFunc
}

// groupID names a group across sources.
type groupID struct{ source, key string }

// NewAlertDesk builds the desk; Start runs it.
func NewAlertDesk(d AlertDeps) *AlertDesk {
	if d.Log == nil {
		d.Log = slog.Default()
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.DeliveriesKept <= 0 {
		d.DeliveriesKept = deliveriesKept
	}
	d.Config = d.Config.WithDefaults()
	desk := &AlertDesk{d: d, kick: make(chan struct{}, 1)}
	if d.Investigator != nil {
		d.Investigator.desk = desk
		if d.Investigator.Proposals != nil {
			d.Investigator.Proposals.desk = desk
		}
	}
	return desk
}

// Kick says a delivery was recorded. It never blocks.
func (a *AlertDesk) Kick() {
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// Start acts on what is on record, a previous run's leftovers first, then
// on each delivery as it is recorded, until Close. A nil desk (no alert
// source configured) does nothing.
func (a *AlertDesk) Start(ctx context.Context) {
	if a == nil {
		return
	}
	ctx, a.stop = context.WithCancel(ctx)
	a.settle(ctx)
	a.Kick()
	a.wg.Go(func() { loop(ctx, pruneEvery, a.forget) })
	a.wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-a.kick:
				a.drain(ctx)
			}
		}
	})
}

// Close stops the desk and its investigations and waits for them. Safe
// twice, without Start, and on a nil desk.
func (a *AlertDesk) Close() {
	if a == nil {
		return
	}
	if a.stop != nil {
		a.stop()
	}
	if a.d.Investigator != nil {
		a.d.Investigator.close()
	}
	a.wg.Wait()
}

// settle says on each root whose investigation a previous run left
// running or queued that it was cut off: an investigation is not started
// again by a restart (it may be what brought the process down).
func (a *AlertDesk) settle(ctx context.Context) {
	groups, err := a.d.Store.FiringAlertGroups(ctx)
	if err != nil {
		a.d.Log.Error("read the alert groups a previous run left", "err", err)
		return
	}
	for _, g := range groups {
		a.update(ctx, groupID{g.Source, g.Key}, func(_ *store.AlertGroup, st *groupState) {
			if s := st.Investigation.Status; s == statusRunning || s == statusQueued {
				st.Investigation.Status, st.Investigation.Why = statusNotRun, "cut off: opsbot restarted; mention me in this thread to investigate again"
			}
		})
	}
}

// drainBatch is how many deliveries are read at a time.
const drainBatch = 100

// drain acts on every open delivery, in order.
func (a *AlertDesk) drain(ctx context.Context) {
	for ctx.Err() == nil {
		open, err := a.d.Store.OpenDeliveries(ctx, drainBatch)
		if err != nil {
			a.d.Log.Error("read the alert deliveries on record", "err", err)
			return
		}
		for _, del := range open {
			if err := a.act(ctx, del); err != nil {
				if ctx.Err() == nil {
					a.d.Log.Error("act on an alert delivery; it stays on record for the next start", "source", del.Source, "err", err)
				}
				return
			}
		}
		if len(open) < drainBatch {
			return
		}
	}
}

// act brings a delivery's group thread up to date, and starts or stops
// its investigation; it logs one line of what came of it (logDelivery).
func (a *AlertDesk) act(ctx context.Context, del store.AlertDelivery) error {
	src, ok := a.d.Config.Source(del.Source)
	if !ok {
		a.logDelivery(del, nil, "dropped: the config no longer has this source")
		return a.d.Store.FinishDelivery(ctx, del.ID)
	}
	dv, err := alerts.Parse(src, del.Body)
	if err != nil {
		a.logDelivery(del, nil, "dropped: it does not read (it did when received)")
		return a.d.Store.FinishDelivery(ctx, del.ID)
	}
	id := groupID{dv.Source, dv.Group}
	unlock := a.lock(id)
	defer unlock()
	g, st, err := a.load(ctx, id)
	if err != nil {
		return err
	}
	if g.Platform == "" {
		if why := a.route(dv, &g, st); why != "" {
			a.logDelivery(del, &dv, "posted nowhere: "+why)
			return a.d.Store.FinishDelivery(ctx, del.ID)
		}
	}
	st.merge(dv, del.ReceivedAt)
	g.Status = string(dv.Status)
	if dv.Status == alerts.Resolved && g.ResolvedAt.IsZero() {
		g.ResolvedAt = resolvedAt(st, del.ReceivedAt)
	} else if dv.Status == alerts.Firing {
		g.ResolvedAt = time.Time{}
	}
	a.plan(ctx, id, &g, st)
	outcome := outcomeOf(&g, st)
	if err := a.show(ctx, &g, st, del.ID); err != nil {
		return err
	}
	a.logDelivery(del, &dv, outcome)
	return nil
}

// route gives a new group its thread's place and whether to investigate,
// or says why it is posted nowhere.
func (a *AlertDesk) route(dv alerts.Delivery, g *store.AlertGroup, st *groupState) string {
	r, ok := a.d.Config.RouteFor(dv.Labels)
	if !ok {
		return "it matches no route"
	}
	if _, on := a.d.Platforms.conn(r.PostTo.Platform); !on {
		return "its route posts to " + r.PostTo.Platform + ", which is off"
	}
	g.Platform, g.Channel, st.Investigate = r.PostTo.Platform, r.PostTo.Channel, r.Investigate
	return ""
}

// outcomeOf says what acting on a delivery did, before it is shown.
func outcomeOf(g *store.AlertGroup, st *groupState) string {
	what := "thread updated"
	if g.RootID == "" {
		what = "thread posted"
	}
	if s := st.Investigation.Status; s != "" && st.Investigate {
		what += "; investigation " + s
	}
	return what
}

// logDelivery logs one line per delivery acted on: its source, group,
// status and outcome. Never its body, nor anything of the source's
// token or secrets (dv is the parsed delivery; nil when it did not read).
func (a *AlertDesk) logDelivery(del store.AlertDelivery, dv *alerts.Delivery, outcome string) {
	attrs := []any{"source", del.Source, "delivery", del.ID, "outcome", outcome}
	if dv != nil {
		attrs = append(attrs, "group", logText(dv.Group), "status", string(dv.Status), "title", logText(dv.Title))
	}
	level := slog.LevelInfo
	if dv == nil || strings.HasPrefix(outcome, "posted nowhere") {
		level = slog.LevelWarn
	}
	a.d.Log.Log(context.Background(), level, "alert delivery", attrs...)
}

// plan decides on the group's investigation, as its delivery is acted on.
func (a *AlertDesk) plan(ctx context.Context, id groupID, g *store.AlertGroup, st *groupState) {
	inv := a.d.Investigator
	switch {
	case !st.Investigate:
		return
	case inv == nil:
		if g.Status == string(alerts.Firing) {
			st.Investigation = investigationState{Status: statusNotRun, Why: "no model is configured (set ANTHROPIC_API_KEY, or OPENAI_API_KEY / OPENAI_BASE_URL, and restart)"}
		}
		return
	}
	if g.Status == string(alerts.Resolved) {
		if inv.stop(id) {
			st.Investigation.Status = statusStopped
		}
		return
	}
	inv.consider(ctx, id, g, st, a.d.Now())
}

// lock holds a group's updates.
func (a *AlertDesk) lock(id groupID) func() {
	m, _ := a.locks.LoadOrStore(id, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// load reads a group and its state (a new one: empty).
func (a *AlertDesk) load(ctx context.Context, id groupID) (store.AlertGroup, *groupState, error) {
	g, err := a.d.Store.AlertGroup(ctx, id.source, id.key)
	if errors.Is(err, store.ErrNotFound) {
		return store.AlertGroup{Source: id.source, Key: id.key}, &groupState{}, nil
	}
	if err != nil {
		return g, nil, err
	}
	st := &groupState{}
	if err := json.Unmarshal(g.State, st); err != nil {
		return g, nil, err
	}
	return g, st, nil
}

// show posts the group's root (its first time) or edits it when what it
// shows changed, then saves the group, the delivery acted on with it.
func (a *AlertDesk) show(ctx context.Context, g *store.AlertGroup, st *groupState, delivery int64) error {
	m := rootMessage(g, st, a.d.Now())
	text := m.Text
	var err error
	switch {
	case g.RootID == "":
		err = a.postRoot(ctx, g, m)
	case text != st.Shown:
		err = a.editRoot(ctx, g, m)
	}
	if err != nil {
		return err
	}
	st.Shown = text
	g.State, _ = json.Marshal(st) // strings, times and maps: cannot fail
	return a.d.Store.SaveAlertGroup(context.WithoutCancel(ctx), *g, delivery)
}

func (a *AlertDesk) postRoot(ctx context.Context, g *store.AlertGroup, m connectors.Message) error {
	ref, err := a.d.Platforms.post(ctx, connectors.Dest{Platform: g.Platform, Channel: g.Channel}, m)
	if err != nil {
		return err
	}
	g.Workspace, g.RootID, g.Thread = ref.Workspace, ref.ID, ref.Thread
	if g.Thread == "" {
		g.Thread = ref.ID
	}
	return nil
}

func (a *AlertDesk) editRoot(ctx context.Context, g *store.AlertGroup, m connectors.Message) error {
	c, ok := a.d.Platforms.conn(g.Platform)
	if !ok {
		return errors.New("no " + g.Platform + " connector")
	}
	m.ThreadName = ""
	return editRetrying(ctx, c, rootRef(g), m)
}

// rootRef names a group's root message.
func rootRef(g *store.AlertGroup) connectors.Ref {
	return connectors.Ref{Platform: g.Platform, Workspace: g.Workspace, Channel: g.Channel, Thread: g.Thread, ID: g.RootID}
}

// threadDest is a group's thread.
func threadDest(g *store.AlertGroup) connectors.Dest {
	return connectors.Dest{Platform: g.Platform, Workspace: g.Workspace, Channel: g.Channel, Thread: g.Thread}
}

// update changes a group's state under its lock and shows it: how an
// investigation reports.
func (a *AlertDesk) update(ctx context.Context, id groupID, change func(*store.AlertGroup, *groupState)) {
	unlock := a.lock(id)
	defer unlock()
	g, st, err := a.load(ctx, id)
	if err == nil && g.RootID != "" {
		change(&g, st)
		err = a.show(ctx, &g, st, 0)
	}
	if err != nil && ctx.Err() == nil {
		a.d.Log.Warn("update an alert thread's summary", "source", id.source, "err", err)
	}
}

// logText is a sender's text for a log line: one line, at most 200 bytes.
func logText(s string) string {
	return cut(strings.Join(strings.Fields(s), " "), 200)
}
