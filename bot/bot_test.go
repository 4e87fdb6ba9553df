package bot

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/persist"
	"github.com/opsbot/opsbot/agent/tools"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/executor"
	"github.com/opsbot/opsbot/policy"
	"github.com/opsbot/opsbot/store"
)

var webLimits = connectors.Limits{MaxText: 4000, EditInterval: 200 * time.Millisecond}

type harness struct {
	t    *testing.T
	bot  *Bot
	conn *fakeConn
	st   *store.Store
	dir  string
	stop func()
}

// newHarness builds a bot over a real store, the real policy and gate, and
// the real local runner; only the chat platform is a fake.
func newHarness(t *testing.T, gateCfg approvals.GateConfig, model agent.Provider) *harness {
	t.Helper()
	conn := newFakeConn(webLimits)
	conn.name = "web"
	dir := t.TempDir()
	b, stop := startBot(t, dir, conn, botOptions{gate: gateCfg, model: model})
	t.Cleanup(stop)
	return &harness{t: t, bot: b, conn: conn, st: storeOf(b), dir: dir, stop: stop}
}

// newHarnessWith is newHarness with options.
func newHarnessWith(t *testing.T, opt botOptions) *harness {
	t.Helper()
	conn := newFakeConn(webLimits)
	conn.name = "web"
	return newHarnessOn(t, conn, opt)
}

// newHarnessOn is newHarness on the platform conn, with options.
func newHarnessOn(t *testing.T, conn *fakeConn, opt botOptions) *harness {
	t.Helper()
	dir := t.TempDir()
	b, stop := startBot(t, dir, conn, opt)
	t.Cleanup(stop)
	return &harness{t: t, bot: b, conn: conn, st: storeOf(b), dir: dir, stop: stop}
}

// restart shuts the bot down as a process exit would (running turns are
// cut, the store closed) and starts a new one on the same database and
// the same platform, whose messages stay.
func (h *harness) restart(opt botOptions) {
	h.t.Helper()
	h.stop()
	h.bot, h.stop = startBot(h.t, h.dir, h.conn, opt)
	h.st = storeOf(h.bot)
	h.t.Cleanup(h.stop)
}

// botOptions vary the wiring of a test bot.
type botOptions struct {
	gate  approvals.GateConfig
	model agent.Provider
	// now is the gate's clock (default time.Now).
	now func() time.Time
	// policy is the policy section (default: empty, the built-in policy).
	policy policy.PolicyConfig
	// sweeper ends what a crashed process left running (default none).
	sweeper Sweeper
	// jobEndTurns sets Bot.JobEndTurns.
	jobEndTurns bool
	// metrics sets Bot.Metrics.
	metrics *Metrics
	// busyTimeout is the store's (default its own).
	busyTimeout time.Duration
	// access is bot.access.
	access map[string][]string
	// held: Recover runs and Start does not, so nothing recorded is
	// routed — a process killed before it acted on what it acknowledged.
	held bool
	// threadReplies is bot.thread_replies.
	threadReplies string
	// limits, when set, changes the bot section (its queue limits).
	limits func(*Config)
	// dbDir holds the database (default: the bot's directory).
	dbDir string
	// more are platforms beside the test's own.
	more []connectors.Connector
	// health is the scheduled checks (default none).
	health Health
	// exec wraps the guard's executor.
	exec func(hosts.Executor) hosts.Executor
	// log is the bot's logger (default slog's).
	log *slog.Logger
	// toolSources add tools to the agent's (an MCP server's).
	toolSources []agent.ToolSource
}

// newTestBot wires a Bot for tests and benchmarks: a real store, policy,
// gate (alice and bob approve unless gateCfg names approvers), local
// runner and, when model is set, the agent; conn is the fake platform. It
// returns the bot and its temporary directory.
func newTestBot(tb testing.TB, conn connectors.Connector, gateCfg approvals.GateConfig, model agent.Provider) (*Bot, string) {
	tb.Helper()
	dir := tb.TempDir()
	b, stop := startBot(tb, dir, conn, botOptions{gate: gateCfg, model: model})
	tb.Cleanup(stop)
	return b, dir
}

// startBot wires and starts a Bot over the database in dir (see
// newTestBot); stop shuts it down and closes the store, and is safe to
// call twice.
func startBot(tb testing.TB, dir string, conn connectors.Connector, opt botOptions) (*Bot, func()) {
	tb.Helper()
	dbDir := dir
	if opt.dbDir != "" {
		dbDir = opt.dbDir
	}
	st, err := store.Open(context.Background(), store.Config{Path: filepath.Join(dbDir, "bot.db"), BusyTimeout: opt.busyTimeout})
	if err != nil {
		tb.Fatal(err)
	}
	fleet, err := hosts.NewFleet(hosts.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	pol, err := policy.NewPolicy(opt.policy)
	if err != nil {
		tb.Fatal(err)
	}
	gateCfg := opt.gate
	if gateCfg.Approvers == nil {
		gateCfg.Approvers = []approvals.ApproverConfig{{Web: approvals.UserList{Users: []string{"alice", "bob"}}}}
	}
	gate := approvals.NewGate(st.Approvals(), gateCfg, approvals.GateOptions{Now: opt.now})
	exec := executor.Settled{Executor: &executor.Fleet{Fleet: fleet}, FollowUps: st.Approvals()}
	guard := &approvals.Guard{Policy: approvals.FleetPolicy{Policy: pol, Inventory: fleet.Inventory},
		Approver: approvals.GateApprover{Gate: gate, Store: st.Approvals(), Platform: conn.Name()}, Exec: exec}
	if opt.exec != nil {
		guard.Exec = opt.exec(exec)
	}
	jobs := &hosts.Jobs{Store: st.Jobs(), Exec: exec}
	d := depsFor(st)
	d.Guard, d.Gate, d.Jobs, d.Health = guard, gate, jobs, opt.health
	d.Hosts = []agent.HostInfo{{Name: "local"}}
	d.Config = Config{DataDir: filepath.Join(dir, "data"), Access: opt.access, ThreadReplies: opt.threadReplies}
	d.NoAgentHelp = "no model: set ANTHROPIC_API_KEY"
	if opt.model != nil {
		d.Agent = &agent.Agent{Provider: opt.model, History: persist.History{Store: st}, Notices: persist.Notices{Store: st},
			Tools: agent.NewRegistry(&tools.RunCommand{Guard: guard})}
		for _, src := range opt.toolSources {
			d.Agent.Tools.AddSource(src)
		}
	}
	d.JobEndTurns, d.Log, d.Metrics, d.Sweeper = opt.jobEndTurns, opt.log, opt.metrics, opt.sweeper
	if opt.limits != nil {
		opt.limits(&d.Config)
	}
	d.Platforms = NewPlatforms(nil, opt.log, append([]connectors.Connector{conn}, opt.more...)...)
	b, err := New(d)
	if err != nil {
		tb.Fatal(err)
	}
	wiredBots.Store(b, wired{st: st, jobs: jobs})
	ctx, cancel := context.WithCancel(context.Background())
	b.Recover(ctx)
	if !opt.held {
		b.Start(ctx)
	}
	var once sync.Once
	return b, func() {
		once.Do(func() {
			cancel()
			b.Close()
			jobs.Close()
			fleet.Close()
			st.Close()
		})
	}
}

// depsFor is the bot's Deps over one real store, which is every one of
// its aggregates (cmd/opsbot wires the same way).
func depsFor(st *store.Store) Deps {
	return Deps{Approvals: st.Approvals(), Sessions: st.Sessions(), Inbox: st.Inbox(), JobRecords: st.Jobs(), Feedback: st}
}

// wired is what a test bot was built over, for the tests to reach.
type wired struct {
	st   *store.Store
	jobs *hosts.Jobs
}

// wiredBots maps each test bot to what it was built over.
var wiredBots sync.Map

// storeOf is the real store a test bot keeps its records in.
func storeOf(b *Bot) *store.Store { return wiringOf(b).st }

// jobsOf is the background jobs of a test bot.
func jobsOf(b *Bot) *hosts.Jobs { return wiringOf(b).jobs }

func wiringOf(b *Bot) wired {
	w, _ := wiredBots.Load(b)
	return w.(wired)
}

var eventSeq atomic.Int64

func (h *harness) say(user, thread, text string) {
	h.deliver(connectors.Event{ID: fmt.Sprintf("ev%d", eventSeq.Add(1)), Kind: connectors.EventMessage, Platform: "web",
		Channel: "ops", Thread: thread, User: connectors.User{ID: user, Name: user}, Text: text, Mention: true})
}

// deliver hands ev to the bot as a platform does: an event the bot could
// not record in time (a loaded machine's slow disk) is delivered again,
// with the same id, so the bot takes it once.
func (h *harness) deliver(ev connectors.Event) {
	h.t.Helper()
	var err error
	for range 30 {
		if err = h.bot.Handle(context.Background(), ev); !errors.Is(err, connectors.ErrNotRecorded) {
			break
		}
	}
	if err != nil {
		h.t.Fatalf("the bot did not take %v %q: %v", ev.Kind, ev.Text+ev.ActionID, err)
	}
}

// click presses a button on a message and returns what the bot answered
// the clicker alone; every click is answered so, once it is handled.
func (h *harness) click(user string, m *fakeMsg, ref connectors.Ref, action string) string {
	for _, btn := range m.msg.Buttons {
		if btn.ActionID != action {
			continue
		}
		said := make(chan string, 1)
		h.deliver(connectors.Event{ID: fmt.Sprintf("click%d", eventSeq.Add(1)), Kind: connectors.EventAction, Platform: "web", Channel: "ops", Thread: ref.Thread,
			User: connectors.User{ID: user, Name: user}, ActionID: btn.ActionID, Value: btn.Value, Ref: ref,
			Respond: func(_ context.Context, text string) error {
				select {
				case said <- connectors.PlainMentions(text):
				default:
					h.t.Errorf("a click was answered twice; again: %q", text)
				}
				return nil
			}})
		return <-said
	}
	h.t.Fatalf("message has no %q button: %+v", action, m.msg)
	return ""
}

// eventually waits for cond, checking it at each change the bot makes to
// the platform's messages. What the tests wait for (a command's effect, a
// turn's record) always comes before the bot's last post, edit or finish
// about it. The limit is a guard against a hang, not a pace.
func (h *harness) eventually(what string, cond func() bool) {
	h.t.Helper()
	limit := time.NewTimer(2 * time.Minute)
	defer limit.Stop()
	for {
		changed := h.conn.changes() // before the check: no change slips between
		if cond() {
			return
		}
		select {
		case <-changed:
		case <-limit.C:
			h.t.Fatalf("no %s after two minutes; thread: %s", what, h.dump())
		}
	}
}

func (h *harness) dump() string {
	h.conn.mu.Lock()
	defer h.conn.mu.Unlock()
	var b strings.Builder
	for _, id := range h.conn.order {
		m := h.conn.msgs[id]
		fmt.Fprintf(&b, "\n[%s %s] %q ctx=%q buttons=%d", id, m.thread, m.msg.Text, m.msg.Context, len(m.msg.Buttons))
	}
	return b.String()
}

// find returns the first message in a thread whose text contains s.
func (h *harness) find(thread, s string) (*fakeMsg, connectors.Ref, bool) {
	h.conn.mu.Lock()
	defer h.conn.mu.Unlock()
	for _, id := range h.conn.order {
		m := h.conn.msgs[id]
		if m.thread == thread && strings.Contains(m.msg.Text+m.msg.Context, s) {
			c := *m
			return &c, connectors.Ref{Platform: "web", Channel: m.channel, Thread: m.thread, ID: id}, true
		}
	}
	return nil, connectors.Ref{}, false
}

func (h *harness) has(thread, s string) func() bool {
	return func() bool { _, _, ok := h.find(thread, s); return ok }
}

func TestRunStreamsOutputOfAnAllowedCommand(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, nil)
	h.say("alice", "t1", "run local echo hello from opsbot")
	h.eventually("the output", h.has("t1", "hello from opsbot"))
	h.eventually("the exit status", h.has("t1", "exit 0"))
}

func TestApprovalFlowEndToEnd(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, nil)
	target := filepath.Join(h.dir, "made-by-approval")
	h.say("alice", "t1", "run local touch "+target)
	h.eventually("the approval card", h.has("t1", "Approval needed"))
	card, ref, _ := h.find("t1", "Approval needed")
	if !strings.Contains(card.msg.Text, "@alice") || !strings.Contains(card.msg.Text, "touch "+target) {
		t.Errorf("card does not name the requester and command: %q", card.msg.Text)
	}
	if said := h.click("alice", card, ref, ActionApprove); !strings.Contains(said, "not counted") {
		t.Errorf("self-approval answer = %q", said)
	}
	if said := h.click("mallory", card, ref, ActionApprove); !strings.Contains(said, "not counted") {
		t.Errorf("non-approver answer = %q", said)
	}
	if _, err := os.Stat(target); err == nil {
		t.Fatal("the command ran before an approver approved")
	}
	old := *card // as a slow client still shows it
	h.click("bob", card, ref, ActionApprove)
	h.eventually("the command to run", func() bool { _, err := os.Stat(target); return err == nil })
	h.eventually("the card to show the decision", h.has("t1", "Approved by @bob"))
	if card := h.msg(ref); len(card.msg.Buttons) != 0 {
		t.Error("a decided card still has buttons")
	}
	if said := h.click("carol", &old, ref, ActionApprove); !strings.Contains(said, "already approved by @bob") {
		t.Errorf("late click answer = %q", said)
	}
}

// msg is a message as the platform shows it now.
func (h *harness) msg(ref connectors.Ref) *fakeMsg {
	h.t.Helper()
	h.conn.mu.Lock()
	defer h.conn.mu.Unlock()
	m, ok := h.conn.msgs[ref.ID]
	if !ok {
		h.t.Fatalf("no message %s", ref.ID)
	}
	c := *m
	return &c
}

func TestApprovalDeniedDoesNotRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, nil)
	target := filepath.Join(h.dir, "never")
	h.say("alice", "t1", "run local touch "+target)
	h.eventually("the approval card", h.has("t1", "Approval needed"))
	card, ref, _ := h.find("t1", "Approval needed")
	h.click("bob", card, ref, ActionDeny)
	h.eventually("the refusal", h.has("t1", "denied by @bob"))
	if _, err := os.Stat(target); err == nil {
		t.Fatal("a denied command ran")
	}
}

func TestApprovalExpiryDenies(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{Expiry: 300 * time.Millisecond}, nil)
	target := filepath.Join(h.dir, "never")
	h.say("alice", "t1", "run local touch "+target)
	h.eventually("the refusal", h.has("t1", "not run: the approval request was expired: nobody decided within less than a second"))
	h.eventually("the card to say it expired", h.has("t1", "expired at"))
	if _, err := os.Stat(target); err == nil {
		t.Fatal("an expired request ran")
	}
}

func TestDeniedByPolicyNeverAsks(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, nil)
	h.say("alice", "t1", "run local mkfs.ext4 /dev/sda1")
	h.eventually("the refusal", h.has("t1", "denied by policy: mkfs.ext4: mkfs.ext4 destroys a file system"))
	if _, _, ok := h.find("t1", "Approval needed"); ok {
		t.Error("a command the policy denies was put up for approval")
	}
}

// model is a fake provider answering from a script of steps.
type model struct {
	mu    sync.Mutex
	steps []func(ctx context.Context, req agent.Request, yield func(agent.StreamEvent) bool)
	n     int
	reqs  []agent.Request
}

// requests are the requests the model was sent, in order.
func (m *model) requests() []agent.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]agent.Request(nil), m.reqs...)
}

func (m *model) Stream(ctx context.Context, req agent.Request) iter.Seq[agent.StreamEvent] {
	return func(yield func(agent.StreamEvent) bool) {
		m.mu.Lock()
		i := m.n
		m.n++
		m.reqs = append(m.reqs, req)
		m.mu.Unlock()
		if i >= len(m.steps) {
			yield(agent.StreamEvent{Kind: agent.EventText, Text: "(no more script)"})
			yield(agent.StreamEvent{Kind: agent.EventStop, StopReason: agent.StopEndTurn})
			return
		}
		m.steps[i](ctx, req, yield)
	}
}

func text(s string) func(context.Context, agent.Request, func(agent.StreamEvent) bool) {
	return func(_ context.Context, _ agent.Request, yield func(agent.StreamEvent) bool) {
		for _, w := range strings.SplitAfter(s, " ") {
			if !yield(agent.StreamEvent{Kind: agent.EventText, Text: w}) {
				return
			}
		}
		yield(agent.StreamEvent{Kind: agent.EventStop, StopReason: agent.StopEndTurn})
	}
}

func blockUntilCancelled(ctx context.Context, _ agent.Request, yield func(agent.StreamEvent) bool) {
	yield(agent.StreamEvent{Kind: agent.EventText, Text: "Working on it"})
	<-ctx.Done()
	yield(agent.StreamEvent{Kind: agent.EventError, Err: ctx.Err()})
}

func TestQueueAndStop(t *testing.T) {
	t.Parallel()
	m := &model{steps: []func(context.Context, agent.Request, func(agent.StreamEvent) bool){blockUntilCancelled, text("So far: nothing found."), text("Second answer.")}}
	h := newHarness(t, approvals.GateConfig{}, m)
	h.say("alice", "t1", "first question")
	h.eventually("the first answer to start", h.has("t1", "Working on it"))
	h.say("alice", "t1", "second question")
	h.eventually("the queued note", h.has("t1", "queued: runs after the current answer"))
	if _, _, ok := h.find("t1", "Second answer"); ok {
		t.Fatal("the second message did not wait for the first turn")
	}
	first, ref, _ := h.find("t1", "Working on it")
	h.click("alice", first, ref, ActionStop)
	h.eventually("the stop note", h.has("t1", "stopped by @alice"))
	if stopped, _, _ := h.find("t1", "stopped by @alice"); !strings.Contains(stopped.msg.Text, "So far: nothing found.") {
		t.Errorf("the stopped answer does not end with the model's summary: %q", stopped.msg.Text)
	}
	h.eventually("the queued message's answer", h.has("t1", "Second answer."))
	// The second turn began before its answer showed; once no turn runs,
	// it has ended, and its history is written.
	h.eventually("both turns recorded", func() bool {
		trail, _ := h.st.Sessions().RunningTurns(context.Background())
		return len(trail) == 0
	})
	// The stopped turn stays on record: its question, what it showed,
	// its summary; then the second turn's two.
	msgs, _ := h.st.Sessions().Messages(context.Background(), 1)
	if len(msgs) != 5 {
		t.Errorf("history has %d messages; want the stopped turn's 3 and the second turn's 2", len(msgs))
	}
}

func TestConcurrentThreadsStayApart(t *testing.T) {
	t.Parallel()
	var steps []func(context.Context, agent.Request, func(agent.StreamEvent) bool)
	for range 6 {
		steps = append(steps, func(_ context.Context, req agent.Request, yield func(agent.StreamEvent) bool) {
			q := req.Messages[len(req.Messages)-1].Content[0].Text
			for i := range 5 {
				yield(agent.StreamEvent{Kind: agent.EventText, Text: fmt.Sprintf("[%s %d]", q, i)})
				time.Sleep(20 * time.Millisecond)
			}
			yield(agent.StreamEvent{Kind: agent.EventStop, StopReason: agent.StopEndTurn})
		})
	}
	h := newHarness(t, approvals.GateConfig{}, &model{steps: steps})
	for i := range 6 {
		h.say("alice", fmt.Sprintf("th%d", i), fmt.Sprintf("q%d", i))
	}
	for i := range 6 {
		th, q := fmt.Sprintf("th%d", i), fmt.Sprintf("q%d", i)
		want := fmt.Sprintf("[%s 0][%s 1][%s 2][%s 3][%s 4]", q, q, q, q, q)
		h.eventually("thread "+th, func() bool {
			msgs := h.conn.thread(th)
			return len(msgs) == 1 && msgs[0].msg.Text == want
		})
	}
}

func TestNoModelSaysHowToConfigureOne(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, nil)
	h.say("alice", "t1", "why is the disk full?")
	h.eventually("the hint", h.has("t1", "set ANTHROPIC_API_KEY"))
	h.say("alice", "t2", "help")
	h.eventually("help", h.has("t2", "run <target> <command>"))
}

func TestRecoverFinalizesInterruptedAnswers(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, nil)
	ctx := context.Background()
	ref, _ := h.conn.add(connectors.Dest{Platform: h.conn.name, Channel: "ops", Thread: "t9"}, connectors.Message{Text: "The disk is at"}, false)
	h.st.Sessions().RecordStreaming(ctx, store.PostedMessage{Platform: "web", Channel: "ops", Thread: "t9", MessageID: ref.ID, Text: "The disk is at"})
	sess, _, _ := h.st.Sessions().SessionFor(ctx, store.ThreadKey{Platform: "web", Channel: "ops", Thread: "t9"})
	h.st.Sessions().BeginTurn(ctx, sess.ID)
	h.bot.Recover(ctx)
	if running, _ := h.st.Sessions().RunningTurns(ctx); len(running) != 0 {
		t.Errorf("%d turns still running after recovery", len(running))
	}
	m, _, _ := h.find("t9", "The disk is at")
	if !strings.Contains(m.msg.Text, "interrupted") {
		t.Errorf("not finalized: %q", m.msg.Text)
	}
	if left, _ := h.st.Sessions().StreamingMessages(ctx); len(left) != 0 {
		t.Errorf("%d messages still recorded as streaming", len(left))
	}
}

func TestJobNotificationIsPostedInItsThread(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, nil)
	ctx := context.Background()
	sess, _, _ := h.st.Sessions().SessionFor(ctx, store.ThreadKey{Platform: "web", Channel: "ops", Thread: "t5"})
	job, err := jobsOf(h.bot).Start(ctx, hosts.Job{SessionID: sess.ID, Host: "local", Command: "echo done", Requester: "alice"}, "", hosts.Confinement{})
	if err != nil {
		t.Fatal(err)
	}
	h.eventually("the notification", h.has("t5", fmt.Sprintf("job %d", job.ID)))
	h.say("alice", "t5", "jobs")
	h.eventually("the jobs list", h.has("t5", "succeeded"))
}

func TestAccessPerChannel(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, botOptions{access: map[string][]string{"ops": {"alice"}}})
	h.say("mallory", "t1", "run local echo hi")
	h.eventually("the refusal", h.has("t1", "may not use opsbot"))
	if _, _, ok := h.find("t1", "hi\n"); ok {
		t.Error("a user without access ran a command")
	}
}

// A person's Stop withdraws the pending request: its card cannot approve a
// run nobody waits for, and asking again opens a new request.
func TestStopWithdrawsThePendingApproval(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, nil)
	target := filepath.Join(h.dir, "never")
	h.say("alice", "t1", "run local touch "+target)
	h.eventually("the approval card", h.has("t1", "Approval needed"))
	_, ref, _ := h.find("t1", "Approval needed")
	h.say("alice", "t1", "stop")
	h.eventually("the card to show the withdrawal", h.has("t1", "Denied by @alice"))
	if card := h.msg(ref); len(card.msg.Buttons) != 0 {
		t.Error("a withdrawn card still has buttons")
	}
	h.say("alice", "t1", "run local touch "+target)
	h.eventually("a second card", func() bool {
		n := 0
		for _, m := range h.conn.thread("t1") {
			if strings.Contains(m.msg.Text, "— requested by @alice") {
				n++
			}
		}
		return n == 2
	})
	if _, err := os.Stat(target); err == nil {
		t.Fatal("a withdrawn request ran")
	}
}

func TestCardFenceOutlastsBackticksInTheCommand(t *testing.T) {
	t.Parallel()
	cmd := "echo '\n```\n' ; rm -rf /srv/*data*"
	m := cardMessage(approvals.Approval{ID: "a1", Host: "local", Command: cmd, Requester: "web:alice", State: approvals.ApprovalPending, Quorum: 1}, "@bob")
	if !strings.Contains(m.Text, "````\n") || strings.Count(m.Text, "````") != 2 {
		t.Errorf("card text:\n%s", m.Text)
	}
}

// Stop names who stopped; someone else's work may be stopped only by an
// approver, and anyone else is told why not.
func TestOnlyTheRequesterOrAnApproverMayStop(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, nil)
	h.say("alice", "t1", "run local sleep 30")
	h.eventually("the run to start", h.has("t1", "running `sleep 30`"))
	run, ref, _ := h.find("t1", "running `sleep 30`")
	if said := h.click("mallory", run, ref, ActionStop); said != "Not stopped: only @alice, who asked for it, or an approver may stop it." {
		t.Errorf("mallory was told %q", said)
	}
	h.say("mallory", "t1", "stop")
	h.eventually("the refusal in the thread", h.has("t1", "Not stopped: only @alice"))
	if said := h.click("bob", run, ref, ActionStop); said != "Stopped." {
		t.Errorf("bob was told %q", said)
	}
	h.eventually("who stopped it", h.has("t1", "⏹ `sleep 30` on local: stopped by @bob"))
	if strings.Contains(h.dump(), "context canceled") {
		t.Errorf("the thread shows a Go error: %s", h.dump())
	}
}

// The card says who may approve, and how many approvals it needs.
func TestCardSaysWhoMayApprove(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, nil)
	h.say("alice", "t1", "run local touch "+filepath.Join(h.dir, "x"))
	h.eventually("the approval card", h.has("t1", "Approval needed"))
	card, _, _ := h.find("t1", "Approval needed")
	fields := map[string]string{}
	for _, f := range card.msg.Fields {
		fields[f.Title] = f.Value
	}
	if connectors.PlainMentions(fields["Who may approve"]) != "@bob" || fields["Needs"] != "1 approval" {
		t.Errorf("card fields: %+v", card.msg.Fields)
	}
	pending, _ := h.st.Approvals().PendingApprovals(context.Background())
	if len(pending) != 1 {
		t.Fatalf("%d pending approvals", len(pending))
	}
	if shown := fmt.Sprint(card.msg.Text, card.msg.Context, card.msg.Fields); strings.Contains(shown, pending[0].ID) {
		t.Errorf("the card shows the request's internal id: %s", shown)
	}
	if want := "expires " + approvals.FormatTime(pending[0].ExpiresAt); card.msg.Context != want {
		t.Errorf("card footer %q, want %q", card.msg.Context, want)
	}
}

// A failed model call shows that the answer failed and an id, not the
// provider's Go error.
func TestModelFailureIsNotShownAsAGoError(t *testing.T) {
	t.Parallel()
	m := &model{steps: []func(context.Context, agent.Request, func(agent.StreamEvent) bool){
		func(_ context.Context, _ agent.Request, yield func(agent.StreamEvent) bool) {
			yield(agent.StreamEvent{Kind: agent.EventError, Err: errors.New(`anthropic: POST "https://api.anthropic.com/v1/messages": 529 overloaded_error`)})
		},
	}}
	h := newHarness(t, approvals.GateConfig{}, m)
	h.say("alice", "t1", "why is the disk full?")
	h.eventually("the failure", h.has("t1", "⚠️ the answer failed (error id "))
	if strings.Contains(h.dump(), "anthropic") {
		t.Errorf("the thread shows the provider's error: %s", h.dump())
	}
}

// A person bot.access keeps out of a channel cannot act there through a
// button either: not Stop, not Approve.
func TestClicksNeedChannelAccess(t *testing.T) {
	t.Parallel()
	conn := newFakeConn(webLimits)
	conn.name = "web"
	dir := t.TempDir()
	b, stop := startBot(t, dir, conn, botOptions{access: map[string][]string{"ops": {"alice"}}})
	t.Cleanup(stop)
	h := &harness{t: t, bot: b, conn: conn, st: storeOf(b), dir: dir, stop: stop}
	h.say("alice", "t1", "run local sleep 30")
	h.eventually("the run to start", h.has("t1", "running `sleep 30`"))
	run, ref, _ := h.find("t1", "running `sleep 30`")
	if said := h.click("bob", run, ref, ActionStop); !strings.Contains(said, "may not use opsbot in this channel") {
		t.Errorf("bob, kept out of #ops, pressed Stop and was told %q", said)
	}
	target := filepath.Join(dir, "approved")
	h.say("alice", "t2", "run local touch "+target)
	h.eventually("the card", h.has("t2", "Approval needed"))
	card, cref, _ := h.find("t2", "Approval needed")
	if said := h.click("bob", card, cref, ActionApprove); !strings.Contains(said, "may not use opsbot in this channel") {
		t.Errorf("bob, kept out of #ops, pressed Approve and was told %q", said)
	}
	if _, err := os.Stat(target); err == nil {
		t.Error("the command ran on the vote of someone kept out of the channel")
	}
	if said := h.click("alice", run, ref, ActionStop); said != "Stopped." {
		t.Errorf("alice was told %q", said)
	}
}

// Event ids are kept for dropping retries, and pruned once older than
// EventsKept.
func TestOldEventIDsArePruned(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, nil)
	ctx := context.Background()
	if first, _ := h.st.Inbox().SeenEvent(ctx, "web", "e1"); !first {
		t.Fatal("a new event id was taken for a retry")
	}
	h.bot.inbox.forget(ctx, h.bot.eventsKept)
	if first, _ := h.st.Inbox().SeenEvent(ctx, "web", "e1"); first {
		t.Fatal("an event id of a moment ago was pruned")
	}
	h.bot.inbox.forget(ctx, time.Nanosecond)
	if first, _ := h.st.Inbox().SeenEvent(ctx, "web", "e1"); !first {
		t.Error("an event id older than EventsKept was kept")
	}
}
