package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"
	"golang.org/x/term"

	"github.com/opsbot/opsbot/approvals/redact"
)

// parseLevel reads a log level name; empty is info.
func parseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "", "info":
		return slog.LevelInfo, nil
	case "debug":
		return slog.LevelDebug, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("%q is not a log level: use debug, info, warn or error", s)
}

// newLogger builds the process logger: text on a terminal, JSON otherwise,
// unless format says which. Every record passes the redactor, message and
// attributes.
func newLogger(w io.Writer, level slog.Level, format string, red *redact.Redactor) *slog.Logger {
	if format == "" || format == "auto" {
		format = "json"
		if f, ok := w.(*os.File); ok && isTerminal(f) {
			format = "text"
		}
	}
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: redactAttr(red)}
	var h slog.Handler = slog.NewJSONHandler(w, opts)
	if format == "text" {
		h = slog.NewTextHandler(w, opts)
	}
	return slog.New(shutdownQuiet{h})
}

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// secretKeys are attribute names whose values are never logged.
var secretKeys = []string{"token", "secret", "password", "api_key", "apikey", "authorization", "key"}

// redactAttr hides attributes named like secrets, and passes every other
// one (the message too: the built-in handlers pass it here) through the
// redactor: credential formats and opsbot's own secret values.
func redactAttr(red *redact.Redactor) func([]string, slog.Attr) slog.Attr {
	if red == nil {
		red = redact.New()
	}
	return func(groups []string, a slog.Attr) slog.Attr {
		lk := strings.ToLower(a.Key)
		for _, k := range secretKeys {
			if lk == k || strings.HasSuffix(lk, "_"+k) {
				return slog.String(a.Key, "[redacted]")
			}
		}
		if len(groups) == 0 && (a.Key == slog.TimeKey || a.Key == slog.LevelKey || a.Key == slog.SourceKey) {
			return a // the handler's own, kept in their kind
		}
		return red.ReplaceAttr(groups, a)
	}
}

// logLine is a config warning's message for one log line: a YAML example
// after its first line becomes flow YAML on that line (comments dropped),
// as a log line escapes its line breaks ("\n    approvals:…") into
// something no one can copy into a file.
func logLine(msg string) string {
	head, block, ok := strings.Cut(msg, "\n")
	if !ok {
		return msg
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(block), &doc); err != nil || len(doc.Content) == 0 {
		return strings.Join(strings.Fields(msg), " ")
	}
	flow(&doc)
	out, err := yaml.Marshal(doc.Content[0])
	if err != nil {
		return strings.Join(strings.Fields(msg), " ")
	}
	return head + " " + strings.TrimSpace(string(out))
}

// flow puts every node under n in flow style, without comments.
func flow(n *yaml.Node) {
	n.Style |= yaml.FlowStyle
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	for _, c := range n.Content {
		flow(c)
	}
}
