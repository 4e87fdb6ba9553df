package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/connectors"
)

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// The web identity table: who a post and a click speak for, by how the
// client came. A name is self-chosen only on loopback without a key;
// elsewhere it comes from a trusted proxy's header or a personal key, and
// the shared key posts under one fixed name and cannot approve.
func TestWebIdentityTable(t *testing.T) {
	t.Parallel()
	cfg := Config{Listen: "0.0.0.0:8080", APIKey: "shared-script-key",
		Users:          []User{{Name: "alice", KeySHA256: sha256Hex("alice-personal-key")}, {Name: "bob", KeySHA256: sha256Hex("bob-personal-key")}},
		TrustedProxies: []string{"10.0.0.5", "192.168.7.0/24"}}
	c, bot := started(t, cfg, nil)
	h := c.Handler()
	from := func(addr string) func(*http.Request) { return func(r *http.Request) { r.RemoteAddr = addr } }
	header := func(k, v string) func(*http.Request) { return func(r *http.Request) { r.Header.Set(k, v) } }
	mods := func(m ...func(*http.Request)) []func(*http.Request) { return m }
	tests := []struct {
		name     string
		mod      []func(*http.Request)
		user     string // the name the body claims
		status   int
		wantUser string // the id the bot sees
	}{
		{"loopback without a key: self-named, marked", nil, "carol", 201, "carol (self-named)"},
		{"trusted proxy's X-Auth-Request-User", mods(from("10.0.0.5:4000"), header("X-Auth-Request-User", "alice"), header("X-Forwarded-For", "203.0.113.9")), "", 201, "alice"},
		{"trusted proxy range, X-Forwarded-User", mods(from("192.168.7.20:4000"), header("X-Forwarded-User", "bob")), "bob", 201, "bob"},
		{"trusted proxy, body claims another name", mods(from("10.0.0.5:4000"), header("X-Auth-Request-User", "alice")), "bob", 403, ""},
		{"proxy header from an untrusted address: ignored", mods(from("10.9.9.9:4000"), header("X-Auth-Request-User", "alice")), "alice", 401, ""},
		{"proxy header from an untrusted address with the shared key", mods(from("10.9.9.9:4000"), header("X-Forwarded-User", "alice"), header(HeaderKey, "shared-script-key")), "", 201, ScriptUser},
		{"proxy header from loopback (not a trusted proxy): still self-named", mods(header("X-Forwarded-User", "alice")), "dave", 201, "dave (self-named)"},
		{"personal key", mods(from("203.0.113.7:5000"), header(HeaderKey, "alice-personal-key")), "", 201, "alice"},
		{"personal key, claiming bob", mods(from("203.0.113.7:5000"), header(HeaderKey, "alice-personal-key")), "bob", 403, ""},
		{"shared key: the fixed name", mods(from("203.0.113.8:5000"), header(HeaderKey, "shared-script-key")), "", 201, ScriptUser},
		{"shared key claiming alice", mods(from("203.0.113.8:5000"), header(HeaderKey, "shared-script-key")), "alice", 403, ""},
		{"wrong key from afar", mods(from("203.0.113.8:5000"), header(HeaderKey, "guess")), "alice", 401, ""},
		{"no key from afar", mods(from("203.0.113.8:5000")), "alice", 401, ""},
		{"X-Forwarded-Host makes loopback a proxied client", mods(header("X-Forwarded-Host", "opsbot.example.com")), "eve", 401, ""},
		{"self-named may not take the scripts' name", nil, ScriptUser, 400, ""},
		{"self-named may not wear the mark", nil, "alice (self-named)", 400, ""},
	}
	for _, tt := range tests {
		body := `{"channel":"ops","user":"` + tt.user + `","text":"@opsbot hello"}`
		w := call(t, h, "POST", "/api/messages", body, tt.mod...)
		if w.Code != tt.status {
			t.Errorf("%s: %d %s, want %d", tt.name, w.Code, w.Body, tt.status)
			continue
		}
		if tt.status != 201 {
			bot.none(t)
			continue
		}
		if ev := bot.next(t); ev.User.ID != tt.wantUser || ev.User.Name != tt.wantUser {
			t.Errorf("%s: the bot saw %+v, want %q", tt.name, ev.User, tt.wantUser)
		}
	}
}

// The shared key cannot approve, even where the approver rules would let
// anyone; a personal key can, and a self-named click on a chat with
// signed-in people reaches the bot marked.
func TestSharedKeyCannotApprove(t *testing.T) {
	t.Parallel()
	cfg := Config{APIKey: "shared-script-key", Users: []User{{Name: "bob", KeySHA256: sha256Hex("bob-personal-key")}}}
	c, bot := started(t, cfg, nil)
	h := c.Handler()
	ctx := context.Background()
	root := say(t, h, "alice", "", "a thread")
	card, err := c.Post(ctx, dest("ops", root.Thread), connectors.Message{Text: "approve?", Buttons: []connectors.Button{
		{ActionID: "approve", Value: "req-1", Label: "Approve"}, {ActionID: "deny", Value: "req-1", Label: "Deny"},
		{ActionID: "approve_similar", Value: "req-1", Label: "Approve similar"}}})
	if err != nil {
		t.Fatal(err)
	}
	click := func(action string, mod ...func(*http.Request)) int {
		return call(t, h, "POST", "/api/actions", clickBody(card.ID, action, "req-1", "", ""), mod...).Code
	}
	script := func(r *http.Request) { r.RemoteAddr = "203.0.113.8:5000"; r.Header.Set(HeaderKey, "shared-script-key") }
	if code := click("approve", script); code != http.StatusForbidden {
		t.Errorf("the shared key's approve: %d, want 403", code)
	}
	if code := click("approve_similar", script); code != http.StatusForbidden {
		t.Errorf("the shared key's approve similar: %d, want 403", code)
	}
	bot.none(t)
	if code := click("deny", script); code != http.StatusAccepted {
		t.Errorf("the shared key's deny: %d, want 202", code)
	} else if ev := bot.next(t); ev.User.ID != ScriptUser {
		t.Errorf("the shared key's deny reached the bot as %q", ev.User.ID)
	}
	bobKey := func(r *http.Request) { r.RemoteAddr = "203.0.113.9:5000"; r.Header.Set(HeaderKey, "bob-personal-key") }
	if code := click("approve", bobKey); code != http.StatusAccepted {
		t.Errorf("bob's approve with his key: %d, want 202", code)
	} else if ev := bot.next(t); ev.User.ID != "bob" {
		t.Errorf("bob's approve reached the bot as %q", ev.User.ID)
	}
	local := call(t, h, "POST", "/api/actions", clickBody(card.ID, "approve", "req-1", "bob", ""))
	if local.Code != http.StatusAccepted {
		t.Fatalf("a local self-named click: %d %s", local.Code, local.Body)
	}
	if ev := bot.next(t); ev.User.ID != "bob (self-named)" {
		t.Errorf("a local click naming itself bob reached the bot as %q, want it marked self-named", ev.User.ID)
	}
}

// Where everyone names themselves, every approval card says so.
func TestSelfNamedCardSaysSo(t *testing.T) {
	t.Parallel()
	c := unstarted(t, Config{}, nil)
	ref, err := c.Post(context.Background(), dest("ops", ""), connectors.Message{Text: "approve?", Context: "requested by alice",
		Buttons: []connectors.Button{{ActionID: "approve", Value: "r", Label: "Approve"}}})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := c.hub.message(context.Background(), ref.ID)
	if !strings.HasPrefix(m.Context, "requested by alice · ") || !strings.Contains(m.Context, "self-chosen") {
		t.Errorf("the card's context is %q, want it to say names are self-chosen", m.Context)
	}
	keyed := unstarted(t, Config{APIKey: "k"}, nil)
	ref, _ = keyed.Post(context.Background(), dest("ops", ""), connectors.Message{Text: "approve?", Context: "requested by alice",
		Buttons: []connectors.Button{{ActionID: "approve", Value: "r", Label: "Approve"}}})
	if m, _ := keyed.hub.message(context.Background(), ref.ID); m.Context != "requested by alice" {
		t.Errorf("with keys, the card's context is %q: the requester's id carries the mark instead", m.Context)
	}
}

// Request ids are scoped by client: eve's post and refused click with an
// id do not swallow alice's and bob's with the same id.
func TestRequestIDsAreScopedByClient(t *testing.T) {
	t.Parallel()
	cfg := Config{Users: []User{{Name: "alice", KeySHA256: sha256Hex("ka")}, {Name: "bob", KeySHA256: sha256Hex("kb")},
		{Name: "eve", KeySHA256: sha256Hex("ke")}}}
	c, bot := started(t, cfg, nil)
	h := c.Handler()
	as := func(key, rid string) func(*http.Request) {
		return func(r *http.Request) {
			r.RemoteAddr = "203.0.113.1:5000"
			r.Header.Set(HeaderKey, key)
			r.Header.Set(HeaderRequestID, rid)
		}
	}
	eve := call(t, h, "POST", "/api/messages", `{"channel":"ops","text":"eve's words"}`, as("ke", "shared-1"))
	alice := call(t, h, "POST", "/api/messages", `{"channel":"ops","text":"alice's words"}`, as("ka", "shared-1"))
	if eve.Code != 201 || alice.Code != 201 {
		t.Fatalf("posts: eve %d, alice %d %s", eve.Code, alice.Code, alice.Body)
	}
	if e, a := decodeBody[postResult](t, eve), decodeBody[postResult](t, alice); e.ID == a.ID {
		t.Errorf("alice's post with eve's request id was answered with eve's message %s", e.ID)
	}
	card, _ := c.Post(context.Background(), dest("ops", ""), connectors.Message{Text: "approve?",
		Buttons: []connectors.Button{{ActionID: "approve", Value: "job-1", Label: "Approve"}}})
	body := clickBody(card.ID, "approve", "job-1", "", "")
	call(t, h, "POST", "/api/actions", body, as("ke", "approve-job-1"))
	call(t, h, "POST", "/api/actions", body, as("kb", "approve-job-1"))
	evEve, evBob := bot.next(t), bot.next(t)
	if evEve.ID == evBob.ID {
		t.Errorf("eve's and bob's clicks with one request id have one event id %q: the bot would drop bob's as a retry", evEve.ID)
	}
	call(t, h, "POST", "/api/actions", body, as("kb", "approve-job-1"))
	if again := bot.next(t); again.ID != evBob.ID {
		t.Errorf("bob's retried click has event id %q, want %q (a retry)", again.ID, evBob.ID)
	}
}
