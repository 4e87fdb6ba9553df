package redact

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/opsbot/opsbot/approvals/redact/redacttest"
)

type config struct{ Token string }

// Every kind of value, in the message, in Logger.With's attributes, in a
// group and under WithGroup, is redacted; a number stays a number, a
// list of names a JSON list, and a duration reads as people write it.
func TestReplaceAttrRedactsEveryKind(t *testing.T) {
	t.Parallel()
	r := New(redacttest.OwnSecrets...)
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{ReplaceAttr: r.ReplaceAttr})).With("key", redacttest.WebAPIKey)
	log.WithGroup("job").Info("ran "+redacttest.PostgresURL,
		"output", redacttest.EnvDump,
		"err", fmt.Errorf("dial: %w", errors.New("bad token "+redacttest.GitHubToken)),
		"cfg", config{Token: redacttest.OpenAIKey},
		slog.Group("g", "jwt", redacttest.JWT),
		"names", []string{"web", redacttest.SlackToken},
		"in", 1500*time.Millisecond,
		"count", 3)
	out := buf.String()
	redacttest.AssertNoSecret(t, redacttest.Secrets(), out)
	for _, want := range []string{`"count":3`, `"in":"1.5s"`, `"names":["web","[redacted`, "[redacted github-pat]", "[redacted url-password]", "[redacted opsbot-secret]"} {
		if !bytes.Contains(buf.Bytes(), []byte(want)) {
			t.Errorf("log line lacks %s: %s", want, out)
		}
	}
}

func TestReplaceAttrRedacts(t *testing.T) {
	t.Parallel()
	r := New(redacttest.OwnSecrets...)
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: r.ReplaceAttr}))
	log.Warn("key is "+redacttest.AnthropicKey, "slack", redacttest.SlackToken, "err", errors.New(redacttest.AWSAccessKey))
	redacttest.AssertNoSecret(t, redacttest.Secrets(), buf.String())
	if !bytes.Contains(buf.Bytes(), []byte("level=WARN")) {
		t.Errorf("built-in attributes were lost: %s", buf.String())
	}
}
