package approvals

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Store is what the Gate needs from the database; the store's Approvals
// sub-store is one. Every state change is one conditional UPDATE there, audited in the same
// transaction, so the Gate holds no state that a restart could lose.
type Store interface {
	CreateApproval(ctx context.Context, a Approval) (Approval, error)
	Approval(ctx context.Context, id string) (Approval, error)
	PendingApprovals(ctx context.Context) ([]Approval, error)
	RecordVote(ctx context.Context, approvalID, voter, vote string) (VoteTally, error)
	Votes(ctx context.Context, approvalID string) ([]Vote, error)
	DecideApproval(ctx context.Context, id string, to ApprovalState, by string) (bool, Approval, error)
}

// ExpiryActor is who decides a request nobody decided in time.
const ExpiryActor = "opsbot:expiry"

// Person is someone who asks or votes, as a connector identifies them.
type Person struct {
	// Platform is "slack", "discord", "web" or "console".
	Platform string
	// ID is the platform's user id (the user name on web and console).
	ID string
	// Groups are the person's Slack user group ids or Discord role ids,
	// as the connector resolved them for this click.
	Groups []string
}

// Key identifies the person in the store: "platform:id".
func (p Person) Key() string { return p.Platform + ":" + p.ID }

// Request is a command waiting for people to approve it.
type Request struct {
	Host       string
	Command    string
	Cwd        string
	Requester  Person
	Channel    string // where the request was made; approvers may be per channel
	SessionID  int64  // 0 when not bound to a session
	Reasons    []string
	HostGroups []string // informational; approver rules use the Gate's HostGroups
}

// Hash binds an approval to exactly this host, command, directory and
// requester; each field is length-prefixed so no two requests collide by
// shifting text between fields.
func (r Request) Hash() string {
	h := sha256.New()
	for _, f := range []string{r.Host, r.Command, r.Cwd, r.Requester.Key()} {
		binary.Write(h, binary.BigEndian, uint64(len(f)))
		h.Write([]byte(f))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Result is how a request ended.
type Result struct {
	ID string
	// Outcome is approved, denied or expired.
	Outcome   ApprovalState
	DecidedBy string // a Person.Key, or ExpiryActor
	DecidedAt time.Time
	Approval  Approval
}

// Allows reports whether the result approves exactly this request: run
// the command only when it does.
func (r Result) Allows(req Request) bool {
	return r.Outcome == ApprovalApproved && r.Approval.Hash == req.Hash()
}

func resultOf(a Approval) Result {
	return Result{ID: a.ID, Outcome: a.State, DecidedBy: a.DecidedBy, DecidedAt: a.DecidedAt, Approval: a}
}

// GateOptions are the Gate's collaborators besides the store.
type GateOptions struct {
	// Now is the clock (default time.Now); tests share it with the store.
	Now func() time.Time
	// HostGroups gives a host's groups, for approvers per host group.
	HostGroups func(host string) []string
}

// Gate runs approval requests: it records them, counts votes and decides
// each request exactly once. It is safe for concurrent use; all of its
// state that matters is in the store.
type Gate struct {
	store Store
	cfg   GateConfig
	opt   GateOptions

	mu      sync.Mutex
	waiters map[string][]chan Result
}

// NewGate builds a Gate from the approvals section of the config.
func NewGate(st Store, cfg GateConfig, opt GateOptions) *Gate {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.HostGroups == nil {
		opt.HostGroups = func(string) []string { return nil }
	}
	return &Gate{store: st, cfg: cfg.WithDefaults(), opt: opt, waiters: map[string][]chan Result{}}
}

// ErrBadRequest is returned for a request missing its host, command or
// requester.
var ErrBadRequest = errors.New("approvals: a request needs a host, a command and a requester")

// Open records a pending request and returns it as stored; the caller
// announces it and calls Wait.
func (g *Gate) Open(ctx context.Context, req Request) (Approval, error) {
	if req.Host == "" || req.Command == "" || req.Requester.ID == "" {
		return Approval{}, ErrBadRequest
	}
	now := g.opt.Now()
	a, err := g.store.CreateApproval(context.WithoutCancel(ctx), Approval{
		Hash: req.Hash(), SessionID: req.SessionID, Platform: req.Requester.Platform, Channel: req.Channel,
		Host: req.Host, Command: req.Command, Cwd: req.Cwd, Requester: req.Requester.Key(), Reasons: req.Reasons,
		Quorum: g.cfg.Quorum, CreatedAt: now, ExpiresAt: now.Add(g.cfg.Expiry),
	})
	if err != nil {
		return Approval{}, fmt.Errorf("approvals: open request: %w", err)
	}
	return a, nil
}

// Wait returns when the request is decided, expiring it at its deadline,
// or when ctx ends. It serves both the requester's first wait and a
// re-attach by id after a restart.
func (g *Gate) Wait(ctx context.Context, id string) (Result, error) {
	ch := g.subscribe(id) // before reading, so no decision slips between
	defer g.unsubscribe(id, ch)
	a, err := g.store.Approval(ctx, id)
	if err != nil {
		return Result{ID: id}, fmt.Errorf("approvals: wait: %w", err)
	}
	if a.State != ApprovalPending {
		return resultOf(a), nil
	}
	left := a.ExpiresAt.Sub(g.opt.Now())
	if left <= 0 {
		return g.expire(ctx, id)
	}
	timer := time.NewTimer(left)
	defer timer.Stop()
	select {
	case r := <-ch:
		return r, nil
	case <-timer.C:
		return g.expire(ctx, id)
	case <-ctx.Done():
		return Result{ID: id}, ctx.Err()
	}
}

// Pending lists the undecided requests, e.g. to re-post their cards and
// re-attach waiters after a restart.
func (g *Gate) Pending(ctx context.Context) ([]Approval, error) {
	as, err := g.store.PendingApprovals(ctx)
	if err != nil {
		return nil, fmt.Errorf("approvals: pending: %w", err)
	}
	return as, nil
}

// ExpireDue expires every pending request past its deadline and returns
// how many this call expired. Run it at start-up and now and then: a
// request whose waiter died with the old process expires here.
func (g *Gate) ExpireDue(ctx context.Context) (int, error) {
	as, err := g.Pending(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, a := range as {
		if g.opt.Now().Before(a.ExpiresAt) {
			continue
		}
		r, err := g.expire(ctx, a.ID)
		if err != nil {
			return n, err
		}
		if r.DecidedBy == ExpiryActor && r.Outcome == ApprovalExpired {
			n++
		}
	}
	return n, nil
}

// expire decides a request that reached its deadline; if someone decided
// it first, their decision stands.
func (g *Gate) expire(ctx context.Context, id string) (Result, error) {
	_, r, err := g.decide(ctx, id, ApprovalExpired, ExpiryActor)
	return r, err
}

// decide makes one transition and tells the waiters once it is committed.
// It must survive the caller's cancel: a click that reached the store
// must not be lost halfway.
func (g *Gate) decide(ctx context.Context, id string, to ApprovalState, by string) (bool, Result, error) {
	won, a, err := g.store.DecideApproval(context.WithoutCancel(ctx), id, to, by)
	if err != nil {
		return false, Result{ID: id}, fmt.Errorf("approvals: decide %s: %w", id, err)
	}
	r := resultOf(a)
	if a.State != ApprovalPending {
		g.notify(id, r)
	}
	return won, r, nil
}

func (g *Gate) subscribe(id string) chan Result {
	ch := make(chan Result, 1)
	g.mu.Lock()
	g.waiters[id] = append(g.waiters[id], ch)
	g.mu.Unlock()
	return ch
}

func (g *Gate) unsubscribe(id string, ch chan Result) {
	g.mu.Lock()
	defer g.mu.Unlock()
	ws := g.waiters[id]
	for i, w := range ws {
		if w == ch {
			ws = append(ws[:i:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(g.waiters, id)
	} else {
		g.waiters[id] = ws
	}
}

// notify hands the final result to every waiter; each channel has room
// for one result, and a decision is final, so a full channel already has it.
func (g *Gate) notify(id string, r Result) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, ch := range g.waiters[id] {
		select {
		case ch <- r:
		default:
		}
	}
}
