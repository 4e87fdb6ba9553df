package redact

import (
	"fmt"
	"log/slog"
)

// Attr returns a with its value redacted: strings, errors, Stringers and
// other values as text, lists of strings as lists, groups attribute by
// attribute. Durations read as people write them ("1.5s", not
// nanoseconds); numbers, booleans and times are kept as they are.
func (r *Redactor) Attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, r.String(v.String()))
	case slog.KindDuration:
		return slog.String(a.Key, v.Duration().String())
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
		case []string:
			red := make([]string, len(x))
			for i, s := range x {
				red[i] = r.String(s)
			}
			return slog.Any(a.Key, red)
		default:
			return slog.String(a.Key, r.String(fmt.Sprintf("%+v", x)))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// ReplaceAttr is a slog.HandlerOptions.ReplaceAttr that redacts, for a
// built-in handler: slog.New(slog.NewJSONHandler(w,
// &slog.HandlerOptions{ReplaceAttr: r.ReplaceAttr})). The built-in
// handlers pass the message, the attributes given to Logger.With and
// those inside groups through it too. It is opsbot's one log redaction
// path: cmd/opsbot's logger wraps it (adding attributes hidden by name).
func (r *Redactor) ReplaceAttr(_ []string, a slog.Attr) slog.Attr {
	return r.Attr(a)
}
