package redact

import (
	"context"
	"fmt"
	"log/slog"
)

// Handler is a slog.Handler that redacts a record's message and every
// string, error and other non-scalar attribute value before passing it
// to the next handler. Values are redacted as text, so a struct logged
// with slog.Any reaches the next handler as its redacted %+v string.
type Handler struct {
	next slog.Handler
	r    *Redactor
}

// NewHandler wraps next so that what it logs is redacted by r.
func NewHandler(next slog.Handler, r *Redactor) *Handler {
	return &Handler{next: next, r: r}
}

var _ slog.Handler = (*Handler)(nil)

// Enabled reports whether the next handler logs at level.
func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

// Handle redacts the record and passes it on.
func (h *Handler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.String(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.r.Attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

// WithAttrs redacts attrs once, up front.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		red[i] = h.r.Attr(a)
	}
	return &Handler{next: h.next.WithAttrs(red), r: h.r}
}

// WithGroup passes the group on.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{next: h.next.WithGroup(name), r: h.r}
}

// Attr returns a with its value redacted: strings, errors, Stringers and
// other values as text, groups attribute by attribute. Numbers, booleans,
// times and durations are kept as they are.
func (r *Redactor) Attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, r.String(v.String()))
	case slog.KindGroup:
		group := v.Group()
		red := make([]slog.Attr, len(group))
		for i, g := range group {
			red[i] = r.Attr(g)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(red...)}
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, r.String(x.Error()))
		case fmt.Stringer:
			return slog.String(a.Key, r.String(x.String()))
		case []byte:
			return slog.String(a.Key, r.String(string(x)))
		default:
			return slog.String(a.Key, r.String(fmt.Sprintf("%+v", x)))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// ReplaceAttr is a slog.HandlerOptions.ReplaceAttr that redacts, for a
// built-in handler: slog.New(slog.NewJSONHandler(w,
// &slog.HandlerOptions{ReplaceAttr: r.ReplaceAttr})). The built-in
// handlers pass the message through it too.
func (r *Redactor) ReplaceAttr(_ []string, a slog.Attr) slog.Attr {
	return r.Attr(a)
}
