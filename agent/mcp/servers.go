package mcp

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/approvals/redact"
)

// FollowUps closes the follow-up of an approval as its call starts, as
// the command ledger does for a command; the store's Approvals has it.
type FollowUps interface {
	FinishFollowUp(ctx context.Context, approvalID string) (bool, error)
}

// Options are the servers' collaborators besides their config.
type Options struct {
	// Approver asks people about the calls that need approval (the front's
	// approvals.GateApprover); nil refuses them.
	Approver  approvals.Approver
	FollowUps FollowUps
	// Audit records every call; nil records nothing.
	Audit Auditor
	// Redactor redacts results, arguments and what servers say (nil: the
	// default rules).
	Redactor *redact.Redactor
	Log      *slog.Logger
	// PingEvery is how often a connected server is pinged (default 30s);
	// Retry the first wait before connecting again (default 1s).
	PingEvery, Retry time.Duration
	// OnChange is told when a server connects, goes down or lists new
	// tools (the logs, the tests).
	OnChange func(server string)
	// Fence, when set, is asked just before each call reaches its server:
	// an error refuses the call, unaudited (ha: this process no longer
	// leads, and its successor owns the audit trail).
	Fence func() error
}

func (o *Options) retry() time.Duration     { return orDefault(o.Retry, time.Second) }
func (o *Options) pingEvery() time.Duration { return orDefault(o.PingEvery, 30*time.Second) }

func (o *Options) changed(server string) {
	if o.OnChange != nil {
		o.OnChange(server)
	}
}

func (o *Options) redact(s string) string { return o.Redactor.String(s) }

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Servers are the configured MCP servers, each kept connected in the
// background from Start to Close: a server that is down delays nothing.
// They are the agent's source of MCP tools (agent.ToolSource).
type Servers struct {
	cfg     Config
	opt     Options
	byName  map[string]*server
	order   []string
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	closeMu sync.Once
}

var _ agent.ToolSource = (*Servers)(nil)

// Start connects to every configured server in the background.
func Start(cfg Config, opt Options) *Servers {
	if opt.Log == nil {
		opt.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opt.Redactor == nil {
		opt.Redactor = redact.New()
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Servers{cfg: cfg, opt: opt, byName: map[string]*server{}, order: cfg.Names(), cancel: cancel}
	for _, name := range s.order {
		srv := newServer(name, cfg.Servers[name], &s.opt)
		s.byName[name] = srv
		s.wg.Go(func() { srv.run(ctx) })
	}
	return s
}

// Close disconnects every server and ends the stdio servers' process
// groups; it returns when they are gone. Safe twice.
func (s *Servers) Close() {
	s.closeMu.Do(func() {
		s.cancel()
		s.wg.Wait()
	})
}

// Settle waits until every server's first attempt to connect has ended,
// or ctx ends: a front that starts a turn at once (opsbot ask) offers the
// tools of the servers that answer quickly.
func (s *Servers) Settle(ctx context.Context) {
	for _, name := range s.order {
		select {
		case <-s.byName[name].tried:
		case <-ctx.Done():
			return
		}
	}
}

// Status is a server's state, for /readyz, metrics and `opsbot mcp list`.
type Status struct {
	Name string
	Up   bool
	// Down says why it is not up.
	Down string
	// Connecting is set until the first attempt to connect has ended.
	Connecting bool
	// Tools are its tools as last listed, with opsbot's decisions.
	Tools []ToolStatus
}

// ToolStatus is a server's tool with the config's decision on it.
type ToolStatus struct {
	Name        string
	Description string
	Verdict     Verdict
	// Late is set for a tool listed after the server's first listing.
	Late bool
	// Hints are the server's annotations in words; never used to decide.
	Hints string
}

// Status reports every server, in the order of their names.
func (s *Servers) Status() []Status {
	var out []Status
	for _, name := range s.order {
		out = append(out, s.byName[name].status(s.cfg))
	}
	return out
}

func (srv *server) status(all Config) Status {
	snap := srv.snapshot()
	st := Status{Name: srv.name, Up: snap.session != nil, Down: snap.down, Connecting: snap.down == notYet}
	for _, t := range snap.tools {
		late := snap.first != nil && !snap.first[t.Name]
		st.Tools = append(st.Tools, ToolStatus{Name: t.Name, Description: t.Description, Verdict: all.Decide(srv.name, t.Name, late),
			Late: late, Hints: hints(t)})
	}
	return st
}
