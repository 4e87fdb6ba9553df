package web

import (
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"github.com/opsbot/opsbot/approvals/redact/redacttest"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/connectortest"
)

// The web chat passes the connectors' conformance suite. Its platform is
// the browser: what it sends is every frame of its event stream, and a
// click is the page's POST /api/actions. It has no rate limits, and its
// streams end only when the bot stops them.
func TestConformance(t *testing.T) {
	t.Parallel()
	c, rec := started(t, Config{APIKey: redacttest.WebAPIKey}, nil)
	var mu sync.Mutex
	var sent []string
	all := &subscriber{}
	c.hub.subscribe(all)
	go func() {
		for f := range all.frames {
			mu.Lock()
			sent = append(sent, string(f))
			mu.Unlock()
		}
	}()
	t.Cleanup(func() { c.hub.unsubscribe(all) })
	h := connectortest.Harness{
		Conn:   c,
		Events: rec.events,
		Dest:   connectors.Dest{Platform: Platform, Channel: "ops"},
		Shown: func(ref connectors.Ref) (string, bool) {
			m, err := c.hub.message(t.Context(), ref.ID)
			return m.Text, err == nil
		},
		Mentioned: func(id string) string { return "@" + id },
		Click: func(ref connectors.Ref, b connectors.Button, u connectors.User) {
			body, _ := json.Marshal(clickRequest{MessageID: ref.ID, ActionID: b.ActionID, Value: b.Value, User: u.ID})
			if w := call(t, c.Handler(), "POST", "/api/actions", string(body)); w.Code != http.StatusAccepted {
				t.Errorf("click: %d %s", w.Code, w.Body)
			}
		},
		Sent: func() []string {
			mu.Lock()
			defer mu.Unlock()
			return append([]string(nil), sent...)
		},
		Secrets: []string{redacttest.WebAPIKey},
	}
	for _, tc := range connectortest.Cases(h) {
		t.Run(tc.Name, func(t *testing.T) { tc.Test(t) })
	}
}
