package web

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/approvals/redact"
	"github.com/opsbot/opsbot/approvals/redact/redacttest"
)

// A secret a person types is redacted before the message is shown,
// archived or handed to the bot, and the message says so in words.
func TestTypedSecretsAreRedactedBeforeTheyAreKept(t *testing.T) {
	t.Parallel()
	archive := NewMemoryArchive()
	c, bot := started(t, Config{}, archive)
	c.Redact = redact.New().String
	h := c.Handler()
	res := say(t, h, "alice", "", "@opsbot is this key still valid? "+redacttest.AWSAccessKey+" and "+redacttest.GitHubToken)
	if !res.Redacted {
		t.Errorf("the post's answer does not say it was redacted: %+v", res)
	}
	ev := bot.next(t)
	if want := "is this key still valid? [redacted aws-access-key] and [redacted github-pat]"; ev.Text != want {
		t.Errorf("the bot got %q, want %q", ev.Text, want)
	}
	msg := decodeBody[messageView](t, call(t, h, "GET", "/api/messages/"+res.ID, ""))
	if !strings.Contains(msg.Text, "[redacted aws-access-key]") || msg.Context != RedactedNote {
		t.Errorf("the message shows %q with note %q", msg.Text, msg.Context)
	}
	stored, _ := archive.Messages(context.Background(), []string{res.ID})
	raw, _ := json.Marshal(stored)
	thread := call(t, h, "GET", "/api/threads/"+res.Thread+"/messages", "").Body.String()
	redacttest.AssertNoSecret(t, redacttest.Secrets(), string(raw), thread, ev.Text)

	plain := say(t, h, "alice", res.Thread, "thanks, nothing secret here")
	if plain.Redacted {
		t.Errorf("a post without secrets says it was redacted: %+v", plain)
	}
	if m := decodeBody[messageView](t, call(t, h, "GET", "/api/messages/"+plain.ID, "")); m.Context != "" {
		t.Errorf("a post without secrets carries a note: %q", m.Context)
	}
}
