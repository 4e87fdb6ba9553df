package bot

import (
	"context"

	"github.com/opsbot/opsbot/connectors"
)

// QueuedNote is the bot's answer to a message that waits behind its
// thread's running work: a front that sends the next line only once the
// last answer is finished (the terminal) may hide it.
const QueuedNote = queuedNote

// ShowApproval posts the card of approval request id at d, as a turn does
// when its command waits; the votes cast on it come back through Handle
// like any click. A front that opens requests outside a turn (`opsbot
// hosts exec`) shows them so, through the one card and vote path. A card
// that cannot be posted denies its request: nobody can approve what they
// cannot see.
func (b *Bot) ShowApproval(ctx context.Context, d connectors.Dest, id string) {
	b.cards().post(ctx, connectors.Event{Platform: d.Platform, Workspace: d.Workspace, Channel: d.Channel, Thread: d.Thread, User: d.Recipient}, id)
}
