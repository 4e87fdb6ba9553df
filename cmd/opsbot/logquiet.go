package main

import (
	"context"
	"errors"
	"log/slog"
)

// shutdownQuiet passes records to next, except that one whose error is a
// cancelled context is logged at debug: that is opsbot stopping (the end
// of `opsbot ask`, Ctrl-D in `opsbot chat`, SIGTERM), not a failure, and a
// warning with a Go error chain ("store: forget events: context canceled")
// would only alarm the person who stopped it.
type shutdownQuiet struct{ next slog.Handler }

var _ slog.Handler = shutdownQuiet{}

// Enabled lets every level the next handler takes through; Handle decides
// on cancelled contexts, which are only seen in the record's attributes.
func (h shutdownQuiet) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

// Handle lowers a record about a cancelled context to debug.
func (h shutdownQuiet) Handle(ctx context.Context, r slog.Record) error {
	if r.Level > slog.LevelDebug && cancelled(r) {
		if !h.next.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
		r.Level = slog.LevelDebug
	}
	return h.next.Handle(ctx, r)
}

// WithAttrs keeps the filter on the derived handler.
func (h shutdownQuiet) WithAttrs(as []slog.Attr) slog.Handler {
	return shutdownQuiet{h.next.WithAttrs(as)}
}

// WithGroup keeps the filter on the derived handler.
func (h shutdownQuiet) WithGroup(name string) slog.Handler {
	return shutdownQuiet{h.next.WithGroup(name)}
}

// cancelled reports whether one of r's attributes is an error that is a
// cancelled context.
func cancelled(r slog.Record) bool {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		if err, ok := a.Value.Resolve().Any().(error); ok && errors.Is(err, context.Canceled) {
			found = true
		}
		return !found
	})
	return found
}
