package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/approvals/redact"
	"github.com/opsbot/opsbot/approvals/redact/redacttest"
)

func TestLoggerNeverPrintsSecrets(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"text", "json"} {
		var buf bytes.Buffer
		log := newLogger(&buf, slog.LevelDebug, format, redact.New("sk-ant-SECRET123", "", "ab"))
		log.Info("calling provider", "api_key", "whatever-it-is", "slack_token", "xoxb-1", "url", "https://x/?key=sk-ant-SECRET123")
		log.With("authorization", "Bearer abc").Debug("request", "body", "token sk-ant-SECRET123 in text")
		log.Error("call failed", "err", errors.New("key sk-ant-SECRET123 rejected"))
		out := buf.String()
		for _, leak := range []string{"sk-ant-SECRET123", "whatever-it-is", "xoxb-1", "Bearer abc"} {
			if strings.Contains(out, leak) {
				t.Errorf("%s log leaks %q:\n%s", format, leak, out)
			}
		}
		if !strings.Contains(out, "[redacted]") || !strings.Contains(out, "calling provider") {
			t.Errorf("%s log lost its message:\n%s", format, out)
		}
	}
}

func TestLoggerFormatAuto(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	newLogger(&buf, slog.LevelInfo, "auto", nil).Info("hello")
	if !strings.HasPrefix(buf.String(), "{") {
		t.Errorf("a non-terminal writer did not get JSON: %q", buf.String())
	}
	buf.Reset()
	newLogger(&buf, slog.LevelWarn, "text", nil).Info("hidden")
	if buf.Len() != 0 {
		t.Errorf("info logged at warn level: %q", buf.String())
	}
}

// The seeds, in the message, in attributes, in an error and split over
// two records: none reaches the log.
func TestLoggerRedactsSeededSecrets(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"text", "json"} {
		var buf bytes.Buffer
		log := newLogger(&buf, slog.LevelDebug, format, redact.New(redacttest.OwnSecrets...))
		log.Info("command output: " + redacttest.Output())
		log.Warn("tool result", "output", redacttest.Output(), "err", errors.New(redacttest.EnvDump))
		log.With("env", redacttest.EnvDump).Info("with")
		log.Info("group", slog.Group("g", slog.String("out", redacttest.Output())))
		out := buf.String()
		redacttest.AssertNoSecret(t, redacttest.Secrets(), out)
		if !strings.Contains(out, "[redacted aws-access-key]") || !strings.Contains(out, "[redacted opsbot-secret]") {
			t.Errorf("%s log does not say what was redacted:\n%s", format, out)
		}
	}
}

// A cancelled context is opsbot stopping, not a failure: its records are
// debug, whatever level they were logged at; every other record keeps its
// level.
func TestLoggerKeepsCancelledContextsAtDebug(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := newLogger(&buf, slog.LevelInfo, "json", nil)
	log.Warn("forget old event ids", "err", fmt.Errorf("store: forget events: %w", context.Canceled))
	log.With("part", "cards").Error("stale cards", "err", fmt.Errorf("store: stale cards: %w", context.Canceled))
	if buf.Len() != 0 {
		t.Errorf("a cancelled context was logged above debug:\n%s", buf.String())
	}
	log.Warn("post reply", "err", errors.New("connection refused"))
	if !strings.Contains(buf.String(), `"level":"WARN"`) {
		t.Errorf("a real failure lost its level: %q", buf.String())
	}
	buf.Reset()
	debug := newLogger(&buf, slog.LevelDebug, "json", nil)
	debug.Warn("expire approvals", "err", fmt.Errorf("approvals: %w", context.Canceled))
	if !strings.Contains(buf.String(), `"level":"DEBUG"`) {
		t.Errorf("at debug the record is not kept as debug: %q", buf.String())
	}
}
