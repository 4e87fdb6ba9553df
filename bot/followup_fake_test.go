package bot

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/policy"
	"github.com/opsbot/opsbot/store"
)

// fakeFollowUpStore holds decided requests and their follow-ups; err,
// when set, fails every read.
type fakeFollowUpStore struct {
	*fakeCardStore
	follow   map[string]store.FollowUp
	finished []string
	consumed []string
}

func newFakeFollowUpStore(as ...approvals.Approval) *fakeFollowUpStore {
	return &fakeFollowUpStore{fakeCardStore: newFakeCardStore(as...), follow: map[string]store.FollowUp{}}
}

func (f *fakeFollowUpStore) DecidedFollowUps(context.Context) ([]store.FollowUp, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []store.FollowUp
	for _, fu := range f.follow {
		if fu.DoneAt.IsZero() && fu.State != approvals.ApprovalPending {
			out = append(out, fu)
		}
	}
	slices.SortFunc(out, func(x, y store.FollowUp) int { return strings.Compare(x.ApprovalID, y.ApprovalID) })
	return out, f.err
}
func (f *fakeFollowUpStore) FollowUpFor(_ context.Context, id string) (store.FollowUp, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fu, ok := f.follow[id]
	return fu, ok, f.err
}
func (f *fakeFollowUpStore) ConsumeApproval(_ context.Context, id, _ string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return false, f.err
	}
	if slices.Contains(f.consumed, id) {
		return false, nil
	}
	f.consumed = append(f.consumed, id)
	return true, nil
}
func (f *fakeFollowUpStore) FinishFollowUp(_ context.Context, id string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if slices.Contains(f.finished, id) {
		return false, nil
	}
	f.finished = append(f.finished, id)
	if fu, ok := f.follow[id]; ok {
		fu.DoneAt = time.Now()
		f.follow[id] = fu
	}
	return true, nil
}

// decide records a decided request and the follow-up that waits on it.
func (f *fakeFollowUpStore) decide(a approvals.Approval, state approvals.ApprovalState, by string, kind string) {
	a.State, a.DecidedBy = state, by
	f.approvals[a.ID] = a
	f.follow[a.ID] = store.FollowUp{ApprovalID: a.ID, SessionID: a.SessionID, Kind: kind, State: state, Command: a.Command,
		Target: a.Host, Hosts: []string{a.Host}}
}

// fakeCards counts refreshes.
type fakeCards struct{ one, all int }

func (c *fakeCards) post(context.Context, connectors.Event, string) {}
func (c *fakeCards) refresh(context.Context, connectors.Event)      { c.one++ }
func (c *fakeCards) refreshAll(context.Context)                     { c.all++ }

// fakeRuns records the approved runs handed to it.
type fakeRuns struct{ runs []runSpec }

func (r *fakeRuns) approved(_ context.Context, _ connectors.Event, _ agent.SessionInfo, _ string, _ []string, spec runSpec) {
	r.runs = append(r.runs, spec)
}

// policyFunc judges every command alike.
type policyFunc func(host, command string) approvals.HostDecision

func (p policyFunc) Check(host, command string) approvals.HostDecision { return p(host, command) }

func newFakeFollowUps(st *fakeFollowUpStore, out *fakeOut) (*followUps, *fakeRuns, *[]queued) {
	runs := &fakeRuns{}
	var mu sync.Mutex
	var q []queued
	return &followUps{store: st, session: st.Session, out: out, cards: &fakeCards{}, run: runs.approved, log: logTo(&strings.Builder{}),
		policy: policyFunc(func(string, string) approvals.HostDecision { return approvals.HostDecision{Action: policy.Allow} }),
		enqueue: func(_ threadID, w queued) (bool, bool, string) {
			mu.Lock()
			defer mu.Unlock()
			q = append(q, w)
			return false, true, ""
		}}, runs, &q
}

// A decided approval no turn waits for: an approved `run` runs once; one
// the policy now denies, or with no policy configured, is told and not
// run; a denied agent call is settled with the model and told; an agent
// call with no model configured is told.
func TestFollowUpsActOnceOverFakes(t *testing.T) {
	t.Parallel()
	conn := newFakeConn(connectors.Limits{MaxText: 4000})
	sess := agent.SessionInfo{ID: 1}
	for _, tc := range []struct {
		name    string
		state   approvals.ApprovalState
		kind    string
		policy  approvals.HostPolicy
		noPol   bool
		ran     int
		want    string
		settled string
	}{
		{name: "approved run", state: approvals.ApprovalApproved, kind: store.FollowUpRun, ran: 1},
		{name: "denied now", state: approvals.ApprovalApproved, kind: store.FollowUpRun,
			policy: policyFunc(func(string, string) approvals.HostDecision {
				return approvals.HostDecision{Action: policy.Deny, Reasons: []string{"restarts are off"}}
			}),
			want: "the policy now refuses it: restarts are off"},
		{name: "no policy", state: approvals.ApprovalApproved, kind: store.FollowUpRun, noPol: true, want: "no command policy is configured"},
		{name: "denied agent call", state: approvals.ApprovalDenied, kind: store.FollowUpAgent, want: "Not run: `systemctl restart nginx` on web-1 — denied by @bob.",
			settled: "not run: the approval request was denied by @bob"},
		{name: "agent off", state: approvals.ApprovalApproved, kind: store.FollowUpAgent, want: "the agent that asked for it is off now"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newFakeFollowUpStore()
			st.decide(pendingApproval("a1", 1), tc.state, "fake:bob", tc.kind)
			out := &fakeOut{c: conn}
			fu, runs, _ := newFakeFollowUps(st, out)
			if tc.policy != nil {
				fu.policy = tc.policy
			}
			if tc.noPol {
				fu.policy = nil
			}
			var settled string
			fu.settle = func(_ context.Context, _ agent.SessionInfo, why string) { settled = why }
			if tc.kind == store.FollowUpAgent && tc.state == approvals.ApprovalApproved {
				fu.settle = nil // no model
			}
			ev := connectors.Event{Platform: "fake", Channel: "C1", Thread: "fu-" + tc.name}
			fu.act(t.Context(), ev, sess, "a1")
			fu.act(t.Context(), ev, sess, "a1") // once only
			if len(runs.runs) != tc.ran {
				t.Errorf("ran %d times; want %d", len(runs.runs), tc.ran)
			}
			said := out.said()
			if tc.want == "" && len(said) != 0 || tc.want != "" && (len(said) != 1 || !strings.Contains(said[0], tc.want)) {
				t.Errorf("the thread was told %q; want once %q", said, tc.want)
			}
			if settled != tc.settled {
				t.Errorf("the model was told %q; want %q", settled, tc.settled)
			}
		})
	}
}

// The expiry sweep queues each decided follow-up in its thread, unless
// its platform is not configured now, and refreshes the cards; a store
// that fails is logged, and a follow-up it cannot read is an internal
// error in the thread.
func TestFollowUpsSweepAndAFailingStore(t *testing.T) {
	t.Parallel()
	conn := newFakeConn(connectors.Limits{MaxText: 4000})
	st := newFakeFollowUpStore()
	st.sessions[1] = store.Session{ID: 1, ThreadKey: store.ThreadKey{Platform: "fake", Channel: "C1", Thread: "T1"}}
	st.sessions[2] = store.Session{ID: 2, ThreadKey: store.ThreadKey{Platform: "slack", Channel: "C9", Thread: "T9"}}
	st.decide(pendingApproval("a1", 1), approvals.ApprovalExpired, "opsbot:expiry", store.FollowUpAgent)
	st.decide(pendingApproval("a2", 2), approvals.ApprovalApproved, "fake:bob", store.FollowUpRun)
	out := &fakeOut{c: conn}
	fu, _, queue := newFakeFollowUps(st, out)
	var logged strings.Builder
	fu.log = logTo(&logged)
	fu.expire(t.Context())
	if len(*queue) != 1 || (*queue)[0].followUp != "a1" || (*queue)[0].ev.Thread != "T1" || (*queue)[0].ev.User.ID != "alice" {
		t.Errorf("queued %+v; want a1's follow-up in T1, as alice", *queue)
	}
	if c := fu.cards.(*fakeCards); c.all != 1 {
		t.Errorf("the cards were refreshed %d times", c.all)
	}

	st.err = errors.New("disk I/O error")
	fu.expire(t.Context())
	fu.first(t.Context(), cardEvent, agent.SessionInfo{ID: 1})
	if !strings.Contains(logged.String(), "approval follow-ups") {
		t.Errorf("the failing store is not logged: %s", logged.String())
	}
	fu.act(t.Context(), cardEvent, agent.SessionInfo{ID: 1}, "a1")
	if said := out.said(); len(said) != 1 || !strings.Contains(said[0], "Internal error") {
		t.Errorf("a follow-up the store cannot read told the thread %q", said)
	}
}
