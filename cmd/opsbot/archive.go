package main

import (
	"context"

	"github.com/opsbot/opsbot/connectors/web"
	"github.com/opsbot/opsbot/store"
)

// webArchive keeps the web chat's messages in SQLite.
type webArchive struct{ st *store.Store }

var _ web.Archive = webArchive{}

func (a webArchive) Save(ctx context.Context, m web.StoredMessage) error {
	return a.st.SaveWebMessage(ctx, store.WebMessage{ID: m.ID, Channel: m.Channel, Thread: m.Thread, User: m.User, Bot: m.Bot,
		Message: m.Message, Finished: m.Finished, Seq: m.Seq, Created: m.Created, Updated: m.Updated})
}

func (a webArchive) Load(ctx context.Context) ([]web.StoredMessage, error) {
	rows, err := a.st.WebMessages(ctx)
	out := make([]web.StoredMessage, len(rows))
	for i, m := range rows {
		out[i] = web.StoredMessage{ID: m.ID, Channel: m.Channel, Thread: m.Thread, User: m.User, Bot: m.Bot,
			Message: m.Message, Finished: m.Finished, Seq: m.Seq, Created: m.Created, Updated: m.Updated}
	}
	return out, err
}
