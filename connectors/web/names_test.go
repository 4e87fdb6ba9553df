package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/web"
	"github.com/opsbot/opsbot/store"
)

// namedChat is the web chat on a real SQLite file with the real approval
// Gate behind it: a click votes as the bot's card handler votes, and
// every event the bot is handed is kept.
type namedChat struct {
	st     *store.Store
	conn   *web.Connector
	gate   *approvals.Gate
	events chan connectors.Event
	votes  chan approvals.VoteResult
	stop   func()
}

func openNamedChat(t *testing.T, path string) *namedChat {
	t.Helper()
	return openNamedChatQuorum(t, path, 1)
}

// openNamedChatQuorum is openNamedChat with requests that need quorum
// approvals.
func openNamedChatQuorum(t *testing.T, path string, quorum int) *namedChat {
	t.Helper()
	st, err := store.Open(context.Background(), store.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := web.New(context.Background(), web.Config{Channels: []string{"ops"}}, st.Web())
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	gate := approvals.NewGate(st.Approvals(), approvals.GateConfig{Quorum: quorum, Approvers: []approvals.ApproverConfig{{Web: approvals.UserList{Users: []string{"*"}}}}},
		approvals.GateOptions{})
	c := &namedChat{st: st, conn: conn, gate: gate, events: make(chan connectors.Event, 64), votes: make(chan approvals.VoteResult, 64)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		conn.Start(ctx, c.handle)
	}()
	<-conn.Running()
	c.stop = func() { cancel(); <-done; st.Close() }
	return c
}

// handle is the bot: a click on Approve or Deny is a vote of its clicker.
func (c *namedChat) handle(ctx context.Context, ev connectors.Event) error {
	c.events <- ev
	if ev.Kind == connectors.EventAction {
		res, err := c.gate.Vote(ctx, ev.Value, approvals.Person{Platform: ev.Platform, ID: ev.User.ID}, ev.ActionID)
		if err != nil {
			return err
		}
		c.votes <- res
	}
	return nil
}

// send makes a request from this machine (a self-named client).
func (c *namedChat) send(t *testing.T, path string, body any) (int, string) {
	t.Helper()
	b, _ := json.Marshal(body)
	r := httptest.NewRequest("POST", path, strings.NewReader(string(b)))
	r.RemoteAddr, r.Host = "127.0.0.1:40000", "127.0.0.1:8080"
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	c.conn.Handler().ServeHTTP(w, r)
	var res struct{ Error string }
	json.Unmarshal(w.Body.Bytes(), &res)
	return w.Code, res.Error
}

func (c *namedChat) post(t *testing.T, user, text string) (int, string) {
	t.Helper()
	return c.send(t, "/api/messages", map[string]string{"channel": "ops", "user": user, "text": text})
}

// noEvent fails the test if the bot was handed anything.
func (c *namedChat) noEvent(t *testing.T, what string) {
	t.Helper()
	select {
	case ev := <-c.events:
		t.Errorf("%s: the bot was handed event %v from %q", what, ev.Kind, ev.User.ID)
	default:
	}
}

// The words every refusal of a chosen name ends with, by kind.
const (
	retype    = "type the name again using letters, digits, punctuation and single plain spaces"
	readsAs   = `reads as "alice", a name this chat already knows`
	noLetters = "has no letter or digit"
)

// saysWhatToDo reports whether a refusal of a name ends with what to do.
func saysWhatToDo(msg string) bool {
	for _, do := range []string{retype, "send exactly", "choose another", "choose a name"} {
		if strings.Contains(msg, do) {
			return true
		}
	}
	return false
}

// A self-chosen name that hides characters, reorders text or reads as a
// name the chat knows is refused with 400 and words that say what to do;
// the bot is handed nothing. Names in any script that read as themselves
// are welcome.
func TestHostileNamesAreRefused(t *testing.T) {
	t.Parallel()
	c := openNamedChat(t, filepath.Join(t.TempDir(), "opsbot.db"))
	defer c.stop()
	if code, msg := c.post(t, "alice", "hello"); code != http.StatusCreated {
		t.Fatalf("alice's first post: %d %s", code, msg)
	}
	hostile := []struct{ name, user, want string }{
		{"zero-width space after", "alice\u200b", "a zero-width character (U+200B) at character 6"},
		{"zero-width space before", "\u200balice", "zero-width"},
		{"zero-width non-joiner", "al\u200cice", "zero-width"},
		{"zero-width joiner", "ali\u200dce", "zero-width"},
		{"word joiner", "alice\u2060", "zero-width"},
		{"byte order mark", "\ufeffalice", "zero-width"},
		{"right-to-left override", "\u202eecila", "right-to-left or left-to-right control (U+202E)"},
		{"pop directional formatting", "alice\u202c", "right-to-left"},
		{"isolates", "\u2066alice\u2069", "right-to-left"},
		{"left-to-right mark", "alice\u200e", "right-to-left"},
		{"right-to-left mark", "\u200falice", "right-to-left"},
		{"arabic letter mark", "alice\u061c", "right-to-left"},
		{"soft hyphen", "ali\u00adce", "invisible formatting character (U+00AD)"},
		{"mongolian vowel separator", "alice\u180e", "invisible formatting"},
		{"variation selector", "alice\ufe0f", "variation selector"},
		{"variation selector supplement", "alice\U000E0100", "variation selector"},
		{"tag characters", "alice\U000E0061\U000E0062", "tag character"},
		{"hangul filler alone", "\u3164", "blank filler character (U+3164)"},
		{"hangul choseong filler", "\u115falice", "blank filler"},
		{"hangul jungseong filler", "alice\u1160", "blank filler"},
		{"halfwidth hangul filler", "alice\uffa0", "blank filler"},
		{"braille blank", "alice\u2800", "blank filler"},
		{"bell", "alice\a", "control character"},
		{"delete", "alice\x7f", "control character"},
		{"private use", "alice\ue000", "private-use"},
		{"plane 16 private use", "alice\U0010FFFD", "private-use"},
		{"noncharacter", "alice\ufdd0", "non-character"},
		{"unassigned", "alice\u0378", "not assigned"},
		{"no-break space", "alice\u00a0smith", "space other than the plain space"},
		{"ideographic space", "alice\u3000smith", "space other than"},
		{"line separator", "alice\u2028smith", "space other than"},
		{"combining marks only", "\u0301\u0302", "combining mark (U+0301) with no letter under it"},
		{"combining mark after a space", "bob \u0301", "no letter under it"},
		{"a tower of marks", "bob\u0301\u0302\u0303\u0304", "more than 3 combining marks"},
		{"punctuation only", "---", noLetters},
		{"capitalised", "Alice", readsAs},
		{"shouted", "ALICE", readsAs},
		{"fullwidth", "ａｌｉｃｅ", readsAs},
		{"trailing combining mark", "alice\u0301", readsAs},
		{"precomposed accent", "alic\u00e9", readsAs},
		{"mathematical fraktur", "𝔞𝔩𝔦𝔠𝔢", readsAs},
		{"modifier capital", "\u1d2clice", readsAs},
		{"the bot, fullwidth", "ｏｐｓｂｏｔ", "is the bot's name"},
		{"the scripts' name, shouted", strings.ToUpper(web.ScriptUser), "kept for what the chat marks itself"},
	}
	for _, tt := range hostile {
		code, msg := c.post(t, tt.user, "hello")
		if code != http.StatusBadRequest || !strings.Contains(msg, tt.want) || !strings.HasPrefix(msg, "user: ") {
			t.Errorf("%s (%+q): %d %q; want 400 saying %q", tt.name, tt.user, code, msg, tt.want)
		}
		if !saysWhatToDo(msg) {
			t.Errorf("%s: %q does not say what to do", tt.name, msg)
		}
		c.noEvent(t, tt.name)
	}
	welcome := []string{"alice", "bob", "Zoë", "José", "Nguyễn Văn An", "山田太郎", "محمد", "דוד", "O'Brien", "alice smith", "dev-2"}
	for _, name := range welcome {
		if code, msg := c.post(t, name, "hello"); code != http.StatusCreated {
			t.Errorf("%q: %d %s, want 201", name, code, msg)
		}
	}
}

// A name reads as its person after a restart too: the chat learns its
// authors from the archive, so a look-alike of an earlier poster is
// refused by the next process, and the poster's own spelling still works.
func TestLookAlikeRefusedAfterRestart(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "opsbot.db")
	first := openNamedChat(t, path)
	if code, msg := first.post(t, "Alice", "hello"); code != http.StatusCreated {
		t.Fatalf("Alice's post: %d %s", code, msg)
	}
	first.stop()

	again := openNamedChat(t, path)
	defer again.stop()
	if code, msg := again.post(t, "alice", "hello"); code != http.StatusBadRequest || !strings.Contains(msg, `send exactly "Alice" if that is you`) {
		t.Errorf("alice after a restart, next to Alice: %d %q; want 400 naming the known spelling", code, msg)
	}
	if code, msg := again.post(t, "Alice", "hello again"); code != http.StatusCreated {
		t.Errorf("Alice's own spelling after a restart: %d %s", code, msg)
	}
}

// The exploit of issue 24: alice asks for a command, and `alice` with a
// zero-width space after it approved her own request, the card reading
// "approved by @alice". Now the web chat refuses the name (400), and the
// Gate itself, handed such a name by any connector, refuses the vote as
// alice's own; the request stays pending until someone else approves.
func TestZeroWidthAliceCannotApproveAlicesRequest(t *testing.T) {
	t.Parallel()
	c := openNamedChat(t, filepath.Join(t.TempDir(), "opsbot.db"))
	defer c.stop()
	ctx := context.Background()
	if code, msg := c.post(t, "alice", "@opsbot restart nginx on web-1"); code != http.StatusCreated {
		t.Fatalf("alice's request: %d %s", code, msg)
	}
	ask := <-c.events
	a, err := c.gate.Open(ctx, approvals.Request{Host: "web-1", Command: "systemctl restart nginx", Channel: ask.Channel,
		Requester: approvals.Person{Platform: ask.Platform, ID: ask.User.ID}})
	if err != nil {
		t.Fatal(err)
	}
	card, err := c.conn.Post(ctx, connectors.Dest{Platform: web.Platform, Channel: ask.Channel, Thread: ask.Thread},
		connectors.Message{Text: "Approve `systemctl restart nginx` on web-1?", Buttons: []connectors.Button{
			{ActionID: approvals.VoteApprove, Value: a.ID, Label: "Approve"}, {ActionID: approvals.VoteDeny, Value: a.ID, Label: "Deny"}}})
	if err != nil {
		t.Fatal(err)
	}
	click := func(user string) (int, string) {
		return c.send(t, "/api/actions", map[string]string{"message_id": card.ID, "action_id": approvals.VoteApprove, "value": a.ID, "user": user})
	}
	for _, user := range []string{"alice\u200b", "alice\u2060", "\u202ealice", "Alice", "ａｌｉｃｅ"} {
		if code, msg := click(user); code != http.StatusBadRequest {
			t.Errorf("%+q's approve of alice's request: %d %q, want 400", user, code, msg)
		}
		c.noEvent(t, "a look-alike's click")
	}
	for _, user := range []string{"alice\u200b", "Alice", "ａｌｉｃｅ", "alice\u0301", "al\u00adice"} {
		res, err := c.gate.Vote(ctx, a.ID, approvals.Person{Platform: web.Platform, ID: user}, approvals.VoteApprove)
		if err != nil || res.Status != approvals.VoteRefused || !strings.Contains(res.Reason, "someone else has to approve") {
			t.Errorf("the Gate took %+q's approve of alice's request: status %v (%q), request %s, %v; want it refused as her own", user, res.Status, res.Reason, res.Approval.State, err)
		}
	}
	if got, _ := c.st.Approvals().Approval(ctx, a.ID); got.State != approvals.ApprovalPending {
		t.Fatalf("after the look-alikes, alice's request is %s (by %s), want pending", got.State, got.DecidedBy)
	}
	if code, msg := click("bob"); code != http.StatusAccepted {
		t.Fatalf("bob's approve: %d %s", code, msg)
	}
	<-c.events
	if res := <-c.votes; res.Status != approvals.VoteDecided || res.Approval.DecidedBy != "web:bob" {
		t.Errorf("bob's approve: %+v, want it to decide the request as web:bob", res)
	}
}

// One person's vote counts once however they spell their name: bob
// approves carol's request (two approvals needed) by a click, opsbot
// restarts, and "Bob" — unknown to the new process, since bob never
// posted — clicks Approve. The Gate finds bob's vote under the other
// spelling and answers "already voted"; the request still waits.
func TestLookAlikeVotesOnceAfterRestart(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "opsbot.db")
	ctx := context.Background()
	first := openNamedChatQuorum(t, path, 2)
	if code, msg := first.post(t, "carol", "@opsbot restart nginx on web-1"); code != http.StatusCreated {
		t.Fatalf("carol's request: %d %s", code, msg)
	}
	ask := <-first.events
	a, err := first.gate.Open(ctx, approvals.Request{Host: "web-1", Command: "systemctl restart nginx", Channel: ask.Channel,
		Requester: approvals.Person{Platform: ask.Platform, ID: ask.User.ID}})
	if err != nil {
		t.Fatal(err)
	}
	card, err := first.conn.Post(ctx, connectors.Dest{Platform: web.Platform, Channel: ask.Channel, Thread: ask.Thread},
		connectors.Message{Text: "Approve?", Buttons: []connectors.Button{{ActionID: approvals.VoteApprove, Value: a.ID, Label: "Approve"}}})
	if err != nil {
		t.Fatal(err)
	}
	approve := func(c *namedChat, user string) approvals.VoteResult {
		t.Helper()
		code, msg := c.send(t, "/api/actions", map[string]string{"message_id": card.ID, "action_id": approvals.VoteApprove, "value": a.ID, "user": user})
		if code != http.StatusAccepted {
			t.Fatalf("%s's approve: %d %s", user, code, msg)
		}
		<-c.events
		return <-c.votes
	}
	if res := approve(first, "bob"); res.Status != approvals.VoteCounted {
		t.Fatalf("bob's approve: status %v, want counted (1 of 2)", res.Status)
	}
	first.stop()

	again := openNamedChatQuorum(t, path, 2)
	defer again.stop()
	if res := approve(again, "Bob"); res.Status != approvals.VoteDuplicate || res.Approval.State != approvals.ApprovalPending {
		t.Errorf("Bob's approve after bob's: status %v, request %s; want already voted, still pending", res.Status, res.Approval.State)
	}
}
