package slack

import (
	"context"
	"fmt"

	"github.com/slack-go/slack"

	"github.com/opsbot/opsbot/connectors"
)

// Task cards: each command (or MCP call) of an answer shows in its stream
// as a task_update chunk, appended by chat.appendStream (Tier 4, the
// appends' budget); a later update of the same id replaces the card.
// Streams start in the timeline display (task_display_mode), cards one
// under the other; a plan shows as a plan block instead (plan.go), for
// Slack does not mix plan blocks and task cards in one message.

// maxTaskText is the most characters the connector puts in a card's
// title, details or output.
const maxTaskText = 256

var _ connectors.TaskUpdater = (*Connector)(nil)

// UpdateTask shows t as a card in stream ref.
func (c *Connector) UpdateTask(ctx context.Context, ref connectors.Ref, t connectors.Task) error {
	if !c.live.has(ref.ID) {
		return fmt.Errorf("slack: chat.appendStream: %w", connectors.ErrStreamEnded)
	}
	return c.streamCall(ctx, "chat.appendStream", ref, func() error {
		_, _, err := c.api.AppendStreamContext(ctx, ref.Channel, ref.ID, slack.MsgOptionChunks(taskChunk(t)))
		return err
	})
}

// taskChunk is t as Slack's task_update chunk.
func taskChunk(t connectors.Task) slack.TaskUpdateChunk {
	ch := slack.NewTaskUpdateChunk(t.ID, truncate(t.Title, maxTaskText))
	ch.Status = slack.TaskCardStatus(t.Status)
	ch.Details = truncate(t.Details, maxTaskText)
	ch.Output = truncate(t.Output, maxTaskText)
	return ch
}
