package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/web"
	"github.com/opsbot/opsbot/store"
)

// chat is the web chat on a store file, as one opsbot process has it:
// its handler records the events the bot is handed.
type chat struct {
	st     *store.Store
	conn   *web.Connector
	events chan connectors.Event
	stop   func()
}

func openChat(t *testing.T, path string) *chat {
	t.Helper()
	st, err := store.Open(context.Background(), store.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := web.New(context.Background(), web.Config{Channels: []string{"ops"}}, st.Web())
	if err != nil {
		t.Fatal(err)
	}
	c := &chat{st: st, conn: conn, events: make(chan connectors.Event, 16)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		conn.Start(ctx, func(_ context.Context, ev connectors.Event) error { c.events <- ev; return nil })
		close(done)
	}()
	<-conn.Running()
	c.stop = func() { cancel(); <-done; st.Close() }
	return c
}

// post sends a person's message with a request id, from this machine.
func (c *chat) post(t *testing.T, requestID, body string) (int, map[string]any) {
	t.Helper()
	r := httptest.NewRequest("POST", "/api/messages", strings.NewReader(body))
	r.RemoteAddr, r.Host = "127.0.0.1:40000", "127.0.0.1:8080"
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set(web.HeaderRequestID, requestID)
	w := httptest.NewRecorder()
	c.conn.Handler().ServeHTTP(w, r)
	var res map[string]any
	json.NewDecoder(w.Body).Decode(&res)
	return w.Code, res
}

// A post retried with the same X-Request-Id after opsbot restarted (the
// store closed and opened again on the same file) gets the first answer,
// 200 with the same message, instead of a second message; its event goes
// to the bot again with the message's id, which the bot drops if the
// first is on record. Before, the ids were remembered in memory only, and
// the retry made a second message and a second answer (issue 12, item 0).
func TestPostRetriedAfterARestartGetsTheFirstAnswer(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "opsbot.db")
	body := `{"channel":"ops","user":"alice","text":"@opsbot is web-3 up?"}`
	first := openChat(t, path)
	code, a := first.post(t, "script-7", body)
	if code != http.StatusCreated {
		t.Fatalf("first post: %d %v", code, a)
	}
	if ev := <-first.events; ev.ID != a["id"] {
		t.Fatalf("the bot got event %q for message %v", ev.ID, a["id"])
	}
	first.stop()

	again := openChat(t, path)
	defer again.stop()
	code, b := again.post(t, "script-7", body)
	if code != http.StatusOK || b["id"] != a["id"] || b["thread"] != a["thread"] || b["seq"] != a["seq"] {
		t.Errorf("the retry after a restart: %d %v; want 200 with the first answer %v", code, b, a)
	}
	if ev := <-again.events; ev.ID != a["id"] {
		t.Errorf("the retry's event is %q, want the first message's id %v (so the bot drops it as a copy)", ev.ID, a["id"])
	}
	msgs, err := again.st.Web().ThreadMessages(context.Background(), a["thread"].(string), 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 {
		t.Errorf("%d messages in the thread after the retry, want 1", len(msgs))
	}
	if code, c := again.post(t, "script-7", `{"channel":"ops","user":"alice","text":"@opsbot is web-4 up?"}`); code != http.StatusConflict {
		t.Errorf("the same id with another message after a restart: %d %v, want 409", code, c)
	}
	if code, d := again.post(t, "script-8", body); code != http.StatusCreated || d["id"] == a["id"] {
		t.Errorf("a new id after a restart: %d %v, want a new message", code, d)
	}
}
