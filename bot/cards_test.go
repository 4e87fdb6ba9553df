package bot

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/store"
)

// fakeOut is a bot's way out to one fake platform: posts go to it, and
// replies and internal errors are also kept in order.
type fakeOut struct {
	c *fakeConn

	mu      sync.Mutex
	replies []string
}

func (o *fakeOut) conn(name string) (connectors.Connector, bool) { return o.c, name == o.c.name }
func (o *fakeOut) post(ctx context.Context, d connectors.Dest, m connectors.Message) (connectors.Ref, error) {
	return o.c.Post(ctx, d, m)
}
func (o *fakeOut) reply(ctx context.Context, ev connectors.Event, text string) {
	o.mu.Lock()
	o.replies = append(o.replies, connectors.PlainMentions(text))
	o.mu.Unlock()
	o.c.Post(ctx, destOf(ev), connectors.Message{Text: text})
}

func (o *fakeOut) said() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.replies)
}

// fakeCardStore holds approval requests and their cards; err, when set,
// fails every read.
type fakeCardStore struct {
	mu        sync.Mutex
	approvals map[string]approvals.Approval
	sessions  map[int64]store.Session
	cards     map[string][2]string // channel, message
	stale     []string             // ids whose cards still show buttons
	shown     []string
	decided   map[string]string // id → by
	err       error
}

func newFakeCardStore(as ...approvals.Approval) *fakeCardStore {
	f := &fakeCardStore{approvals: map[string]approvals.Approval{}, sessions: map[int64]store.Session{}, cards: map[string][2]string{}, decided: map[string]string{}}
	for _, a := range as {
		f.approvals[a.ID] = a
	}
	return f
}

func (f *fakeCardStore) Approval(_ context.Context, id string) (approvals.Approval, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.approvals[id]
	if f.err != nil {
		return a, f.err
	}
	if !ok {
		return a, errors.New("no such approval")
	}
	return a, nil
}
func (f *fakeCardStore) DecideApproval(_ context.Context, id string, to approvals.ApprovalState, by string) (bool, approvals.Approval, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.approvals[id]
	a.State, a.DecidedBy = to, by
	f.approvals[id], f.decided[id] = a, by
	return true, a, nil
}
func (f *fakeCardStore) SetApprovalCard(_ context.Context, id, channel, message string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cards[id] = [2]string{channel, message}
	return f.err
}
func (f *fakeCardStore) ApprovalCard(_ context.Context, id string) (string, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.cards[id]
	return c[0], c[1], f.err
}
func (f *fakeCardStore) StaleCards(_ context.Context, sessionID int64) ([]approvals.Approval, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []approvals.Approval
	for _, id := range f.stale {
		if a := f.approvals[id]; a.SessionID == sessionID {
			out = append(out, a)
		}
	}
	return out, f.err
}
func (f *fakeCardStore) AllStaleCards(context.Context, int) ([]approvals.Approval, []string, []string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var as []approvals.Approval
	var channels, messages []string
	for _, id := range f.stale {
		as, channels, messages = append(as, f.approvals[id]), append(channels, f.cards[id][0]), append(messages, f.cards[id][1])
	}
	return as, channels, messages, f.err
}
func (f *fakeCardStore) UnplacedCards(context.Context, int) ([]approvals.Approval, error) {
	return nil, nil
}

func (f *fakeCardStore) UncardedPending(context.Context, time.Time, int) ([]approvals.Approval, error) {
	return nil, nil
}

func (f *fakeCardStore) MarkCardShown(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shown = append(f.shown, id)
	f.stale = slices.DeleteFunc(f.stale, func(s string) bool { return s == id })
	return nil
}
func (f *fakeCardStore) SessionFor(_ context.Context, key store.ThreadKey) (store.Session, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.sessions {
		if s.Platform == key.Platform && s.Channel == key.Channel && s.Thread == key.Thread {
			return s, false, f.err
		}
	}
	return store.Session{}, false, errors.New("no session")
}
func (f *fakeCardStore) Session(_ context.Context, id int64) (store.Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.sessions[id]
	if !ok {
		return s, errors.New("no session")
	}
	return s, f.err
}

func pendingApproval(id string, session int64) approvals.Approval {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return approvals.Approval{ID: id, SessionID: session, Host: "web-1", Command: "systemctl restart nginx", Requester: "fake:alice",
		Channel: "C1", State: approvals.ApprovalPending, Quorum: 1, CreatedAt: now, ExpiresAt: now.Add(15 * time.Minute)}
}

func logTo(b *strings.Builder) *slog.Logger { return slog.New(slog.NewTextHandler(b, nil)) }

var cardEvent = connectors.Event{Platform: "fake", Channel: "C1", Thread: "T1", User: connectors.User{ID: "bob", Name: "bob"}}

// A card is posted with its buttons and where it is recorded; a card the
// platform refuses denies its request (nobody can approve what they cannot
// see); a request the store cannot read posts nothing and is logged.
func TestCardsPostAndDenyWhatCannotBeShown(t *testing.T) {
	t.Parallel()
	conn := newFakeConn(connectors.Limits{MaxText: 4000})
	st := newFakeCardStore(pendingApproval("a1", 1))
	var logged strings.Builder
	c := &cards{store: st, sessions: st, out: &fakeOut{c: conn}, log: logTo(&logged)}
	c.post(t.Context(), cardEvent, "a1")
	posted := conn.thread("T1")
	if len(posted) != 1 || len(posted[0].msg.Buttons) != 2 || !strings.Contains(posted[0].msg.Text, "systemctl restart nginx") {
		t.Fatalf("the card posted: %+v", posted)
	}
	if st.cards["a1"] != [2]string{"C1", "m1"} {
		t.Errorf("the card's place recorded: %v", st.cards["a1"])
	}

	st.approvals["a2"] = pendingApproval("a2", 1)
	refusing := &cards{store: st, sessions: st, out: refusingOut{&fakeOut{c: conn}}, log: logTo(&logged)}
	refusing.post(t.Context(), cardEvent, "a2")
	if st.decided["a2"] != "opsbot:card-not-posted" {
		t.Errorf("a card that could not be posted left its request %+v", st.approvals["a2"])
	}

	before := len(conn.thread("T1"))
	st.err = errors.New("disk I/O error")
	c.post(t.Context(), cardEvent, "a1")
	if n := len(conn.thread("T1")); n != before {
		t.Errorf("a request the store could not read was posted (%d messages, %d before)", n, before)
	}
	if !strings.Contains(logged.String(), "approval card") {
		t.Errorf("the failing store is not logged: %s", logged.String())
	}
}

// refusingOut is a platform that refuses every post.
type refusingOut struct{ *fakeOut }

func (refusingOut) post(context.Context, connectors.Dest, connectors.Message) (connectors.Ref, error) {
	return connectors.Ref{}, errors.New("channel_not_found")
}

// The expiry sweep's refresh edits each decided card that still offers
// buttons, marks a card with no thread shown, keeps one whose platform is
// not configured now, and logs a store that fails.
func TestCardsRefreshAllShowsDecisions(t *testing.T) {
	t.Parallel()
	conn := newFakeConn(connectors.Limits{MaxText: 4000})
	out := &fakeOut{c: conn}
	st := newFakeCardStore(pendingApproval("a1", 1), pendingApproval("a2", 0), pendingApproval("a3", 2))
	st.sessions[1] = store.Session{ID: 1, ThreadKey: store.ThreadKey{Platform: "fake", Channel: "C1", Thread: "T1"}}
	st.sessions[2] = store.Session{ID: 2, ThreadKey: store.ThreadKey{Platform: "slack", Channel: "C9", Thread: "T9"}}
	var logged strings.Builder
	c := &cards{store: st, sessions: st, out: out, log: logTo(&logged)}
	c.post(t.Context(), cardEvent, "a1")
	for _, id := range []string{"a1", "a2", "a3"} {
		a := st.approvals[id]
		a.State, a.DecidedBy, a.DecidedAt = approvals.ApprovalExpired, "opsbot:expiry", a.ExpiresAt
		st.approvals[id] = a
	}
	st.stale = []string{"a1", "a2", "a3"}
	c.refreshAll(t.Context())
	if m := conn.thread("T1"); len(m) != 1 || len(m[0].msg.Buttons) != 0 || !strings.Contains(m[0].msg.Context, "expired") {
		t.Errorf("the expired card shows %+v", m)
	}
	if !slices.Equal(st.shown, []string{"a1", "a2"}) || !slices.Equal(st.stale, []string{"a3"}) {
		t.Errorf("marked shown %v, still stale %v; want a1, a2 shown and slack's a3 kept", st.shown, st.stale)
	}

	st.err = errors.New("disk I/O error")
	c.refreshAll(t.Context())
	c.refresh(t.Context(), cardEvent)
	if !strings.Contains(logged.String(), "stale cards") {
		t.Errorf("the failing store is not logged: %s", logged.String())
	}
}

// A click on a card where nobody can approve (no gate is configured) is
// answered, not a crash of the bot.
func TestCardsVoteWithoutAGateIsAnswered(t *testing.T) {
	t.Parallel()
	conn := newFakeConn(connectors.Limits{MaxText: 4000})
	out := &fakeOut{c: conn}
	st := newFakeCardStore(pendingApproval("a1", 1))
	c := &cards{store: st, sessions: st, out: out, log: slog.Default()}
	ev := cardEvent
	ev.ActionID, ev.Value = ActionApprove, "a1"
	c.vote(t.Context(), ev)
	if said := out.said(); len(said) != 1 || !strings.Contains(said[0], "Nobody can approve commands here") {
		t.Errorf("the clicker was told %q", said)
	}
}
