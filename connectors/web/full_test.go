package web

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestPostToAFullBotIs429: a message for the bot while the bot says it is
// full is answered 429 with Retry-After and the bot's reason, and is
// neither kept nor handed on; a message for people alone still goes in.
func TestPostToAFullBotIs429(t *testing.T) {
	t.Parallel()
	c, rec := started(t, Config{}, nil)
	var asked []string
	c.Full = func(channel, thread string) string {
		asked = append(asked, channel+"/"+thread)
		if thread == "" {
			return ""
		}
		return "this thread is busy: 10 messages already wait for the current answer"
	}
	h := c.Handler()
	first := say(t, h, "alice", "", "@opsbot why is the disk full?")
	rec.next(t)
	body, _ := json.Marshal(postRequest{Channel: "ops", Thread: first.Thread, User: "alice", Text: "and now?"})
	w := call(t, h, "POST", "/api/messages", string(body))
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "10" {
		t.Fatalf("post to a full thread: %d Retry-After %q; want 429 with Retry-After 10", w.Code, w.Header().Get("Retry-After"))
	}
	if e := decodeBody[apiError](t, w); !strings.Contains(e.Error, "this thread is busy") {
		t.Errorf("the 429 says %q; want the bot's reason", e.Error)
	}
	rec.none(t)
	msgs := decodeBody[struct{ Messages []messageView }](t, call(t, h, "GET", "/api/threads/"+first.Thread+"/messages", ""))
	if n := len(msgs.Messages); n != 1 {
		t.Errorf("the thread holds %d messages after a refused post; want 1", n)
	}
	say(t, h, "bob", "", "lunch, anyone?") // not for the bot: never asks
	if want := []string{"ops/", "ops/" + first.Thread}; strings.Join(asked, " ") != strings.Join(want, " ") {
		t.Errorf("Full was asked about %v; want %v", asked, want)
	}
}
