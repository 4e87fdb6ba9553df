package web

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/opsbot/opsbot/connectors"
)

func clickBody(id, action, value, user, client string) string {
	b, _ := json.Marshal(clickRequest{MessageID: id, ActionID: action, Value: value, User: user, Client: client})
	return string(b)
}

// A click reaches the bot as the clicker; Respond shows its text on the
// clicker's stream only; a button no longer shown cannot be clicked.
func TestClick(t *testing.T) {
	t.Parallel()
	c, bot := started(t, Config{}, nil)
	h, base, ctx := c.Handler(), serve(t, c), context.Background()
	root := say(t, h, "alice", "", "@opsbot restart nginx")
	bot.next(t)
	card, _ := c.StartStream(ctx, dest("ops", root.Thread), connectors.Message{Text: "approve?", Buttons: []connectors.Button{
		{ActionID: "approve", Value: "req-7", Label: "Approve", Style: connectors.StylePrimary},
		{ActionID: "deny", Value: "req-7", Label: "Deny", Style: connectors.StyleDanger}}})
	bobTab := openStream(t, base, "client=bob-tab", nil)
	aliceTab := openStream(t, base, "client=alice-tab", nil)
	bobTab.ready()
	aliceTab.ready()

	w := call(t, h, "POST", "/api/actions", clickBody(card.ID, "approve", "req-7", "bob", "bob-tab"),
		func(r *http.Request) { r.Header.Set(HeaderRequestID, "click-1") })
	if w.Code != http.StatusAccepted || decodeBody[map[string]string](t, w)["request_id"] != "click-1" {
		t.Fatalf("click: %d %s", w.Code, w.Body)
	}
	ev := bot.next(t)
	if ev.Kind != connectors.EventAction || ev.User.ID != "bob" || ev.User.Name != "bob" || ev.ActionID != "approve" ||
		ev.Value != "req-7" || ev.Ref != card || ev.Thread != root.Thread || ev.Channel != "ops" || ev.ID != clickID(identity{kind: selfNamed, name: "bob", addr: "127.0.0.1"}, "click-1") {
		t.Fatalf("the bot got %+v", ev)
	}
	if err := ev.Respond(ctx, "you approved req-7"); err != nil {
		t.Fatal(err)
	}
	c.Edit(ctx, card, connectors.Message{Text: "approved by bob"})
	if f := bobTab.next(); f.event != "notice" || f.data != `{"text":"you approved req-7","message_id":"`+card.ID+`","thread":"`+root.Thread+`"}` {
		t.Errorf("bob's tab got %+v, want the notice", f)
	}
	if m := aliceTab.message(); m.Text != "approved by bob" {
		t.Errorf("alice's tab got %q, want the edit (and no notice before it)", m.Text)
	}
	if m := bobTab.message(); m.Text != "approved by bob" {
		t.Errorf("bob's tab got %q after the notice", m.Text)
	}

	tests := []struct {
		name, body string
		status     int
	}{
		{"a button the card no longer shows", clickBody(card.ID, "approve", "req-7", "carol", ""), 409},
		{"a forged value", clickBody(root.ID, "approve", "req-8", "carol", ""), 409},
		{"an unknown message", clickBody("m999", "approve", "req-7", "carol", ""), 404},
		{"no user", clickBody(card.ID, "approve", "req-7", "", ""), 400},
	}
	for _, tt := range tests {
		if w := call(t, h, "POST", "/api/actions", tt.body); w.Code != tt.status {
			t.Errorf("%s: %d %s, want %d", tt.name, w.Code, w.Body, tt.status)
		}
	}
	bot.none(t)
	if err := ev.Respond(ctx, "late"); err != nil {
		t.Errorf("respond to an open tab: %v", err)
	}
	gone := connectors.Event{Respond: c.responder("closed-tab", messageView{})}
	if err := gone.Respond(ctx, "hello?"); err == nil {
		t.Error("respond to a tab with no stream reported success")
	}
}

func TestClickWhileBotDown(t *testing.T) {
	t.Parallel()
	c := unstarted(t, Config{}, nil)
	ref, _ := c.StartStream(context.Background(), dest("ops", ""), connectors.Message{Text: "?", Buttons: []connectors.Button{{ActionID: "a", Value: "v", Label: "A"}}})
	if w := call(t, c.Handler(), "POST", "/api/actions", clickBody(ref.ID, "a", "v", "bob", "")); w.Code != http.StatusServiceUnavailable {
		t.Errorf("click with the bot down: %d", w.Code)
	}
}
