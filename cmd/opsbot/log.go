package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"golang.org/x/term"
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
// unless format says which. Every record passes the redactor.
func newLogger(w io.Writer, level slog.Level, format string, secrets []string) *slog.Logger {
	if format == "" || format == "auto" {
		format = "json"
		if f, ok := w.(*os.File); ok && isTerminal(f) {
			format = "text"
		}
	}
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: redactAttr(secrets)}
	if format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// secretKeys are attribute names whose values are never logged.
var secretKeys = []string{"token", "secret", "password", "api_key", "apikey", "authorization", "key"}

// redactAttr hides attributes named like secrets, and every occurrence of
// a configured secret value in any string attribute.
func redactAttr(secrets []string) func([]string, slog.Attr) slog.Attr {
	var values []string
	for _, s := range secrets {
		if len(s) >= 4 { // shorter values would redact ordinary words
			values = append(values, s)
		}
	}
	return func(_ []string, a slog.Attr) slog.Attr {
		lk := strings.ToLower(a.Key)
		for _, k := range secretKeys {
			if lk == k || strings.HasSuffix(lk, "_"+k) {
				return slog.String(a.Key, "[redacted]")
			}
		}
		if v, ok := textOf(a.Value); ok {
			for _, s := range values {
				v = strings.ReplaceAll(v, s, "[redacted]")
			}
			return slog.String(a.Key, v)
		}
		return a
	}
}

// textOf is a value's text when it is a string, an error or a Stringer:
// the kinds that can carry a secret into a log line.
func textOf(v slog.Value) (string, bool) {
	switch v.Kind() {
	case slog.KindString:
		return v.String(), true
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return x.Error(), true
		case fmt.Stringer:
			return x.String(), true
		}
	}
	return "", false
}
