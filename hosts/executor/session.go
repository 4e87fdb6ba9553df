package executor

import (
	"context"

	"github.com/opsbot/opsbot/hosts"
)

// sessionKey carries the chat session a context's work belongs to.
type sessionKey struct{}

// WithSession marks ctx as work of chat session id (the store's session
// row), so that the audit trail's command rows name their thread even
// when they run outside a turn: an approved command's follow-up, a plan's
// steps. A zero id leaves ctx as it is.
func WithSession(ctx context.Context, id int64) context.Context {
	if id == 0 {
		return ctx
	}
	return context.WithValue(ctx, sessionKey{}, id)
}

// tagThread adds to a command row's detail what names its thread: the
// session id WithSession set, and the thread label hosts.WithLabel set
// ("platform/channel/thread"). Incident memory files the command under
// that thread (store migration 0026).
func tagThread(ctx context.Context, detail map[string]any) map[string]any {
	if id, ok := ctx.Value(sessionKey{}).(int64); ok {
		detail["session_id"] = id
	}
	if l := hosts.LabelOf(ctx); l != "" {
		detail["thread"] = l
	}
	return detail
}
