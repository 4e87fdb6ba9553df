package bot

import (
	"context"
	"log/slog"
	"strings"

	"github.com/opsbot/opsbot/store"
)

// PostedPostmortem is the thread's postmortem for a download: the one
// last posted in it, as posted; or, when none was, one built from the
// record without a model, which says so. It never asks the model: a
// download is a read, and it must say what the thread was told.
func PostedPostmortem(ctx context.Context, m *store.Memory, sessionID int64, thread store.ThreadKey) (string, error) {
	md, _, found, err := m.LastPostmortem(ctx, sessionID)
	if err != nil || found {
		return md, err
	}
	md, err = Postmortem(ctx, m, sessionID, thread, nil, slog.Default())
	if err != nil {
		return "", err
	}
	title, rest, _ := strings.Cut(md, "\n\n")
	return title + "\n\n_No postmortem was posted in this thread: this one was built from the record when it was downloaded, " +
		"without a model. Say `postmortem` in the thread for one with the model's prose._\n\n" + rest, nil
}

// postThreadPostmortem writes the thread's postmortem with the model's
// prose and keeps it for downloads; the text to post.
func postThreadPostmortem(ctx context.Context, m *store.Memory, pen proseModel, sessionID int64, thread store.ThreadKey, log *slog.Logger) (string, error) {
	md, err := Postmortem(ctx, m, sessionID, thread, pen.writer(m, sessionID), log)
	if err != nil {
		return "", err
	}
	if err := m.SavePostmortem(context.WithoutCancel(ctx), sessionID, md); err != nil {
		log.Warn("postmortem: not kept for downloads", "err", err)
	}
	return md, nil
}
