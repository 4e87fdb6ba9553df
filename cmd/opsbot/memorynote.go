package main

import (
	"context"
	"errors"

	"github.com/opsbot/opsbot/bot"
	"github.com/opsbot/opsbot/connectors/web"
	"github.com/opsbot/opsbot/store"
)

// noFullTextNote is what `opsbot run` logs and `opsbot config check`
// prints when this binary was built without the sqlite_fts5 tag ("" when
// it was not): the incident memory then recalls with a slower scan.
func noFullTextNote() string {
	if store.FullTextSearch() {
		return ""
	}
	return "this opsbot was built without the sqlite_fts5 build tag: the incident memory (search_history, " +
		"an alert's \"seen before\") searches with a slower scan instead of SQLite's full-text index; " +
		"build with 'make build' or -tags timetzdata,sqlite_fts5"
}

// webPostmortem writes a web thread's postmortem for the web chat's
// GET /api/threads/{thread}/postmortem.md: the one last posted in it.
func (rt *parts) webPostmortem(ctx context.Context, channel, thread string) (string, bool, error) {
	key := store.ThreadKey{Platform: web.Platform, Channel: channel, Thread: thread}
	if ok, err := rt.store.Sessions().HasSession(ctx, key); err != nil || !ok {
		return "", false, err
	}
	sess, _, err := rt.store.Sessions().SessionFor(ctx, key)
	if err != nil {
		return "", false, err
	}
	md, err := bot.PostedPostmortem(ctx, rt.store.Memory(), sess.ID, key) // never the model: see PostedPostmortem
	if errors.Is(err, bot.ErrNothingOnRecord) {
		return "", false, nil
	}
	return md, err == nil, err
}
