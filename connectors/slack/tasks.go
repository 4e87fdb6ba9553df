package slack

import (
	"context"
	"fmt"
	"slices"

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

var _ connectors.TaskMessenger = (*Connector)(nil)

// ShowsTasksInMessages says that a message the connector posts or edits
// shows Message.Tasks, as task_card blocks above its text: an answer
// going on by chat.update keeps its cards in its own message.
func (c *Connector) ShowsTasksInMessages() bool { return true }

// UpdateTask shows t as a card in stream ref.
func (c *Connector) UpdateTask(ctx context.Context, ref connectors.Ref, t connectors.Task) error {
	if !c.live.has(ref.ID) {
		c.live.wasPosted(ref.ID) // the renderer learns it does not stream
		return fmt.Errorf("slack: chat.appendStream: %w", connectors.ErrStreamEnded)
	}
	err := c.streamCall(ctx, "chat.appendStream", ref, func() error {
		_, _, err := c.api.AppendStreamContext(ctx, ref.Channel, ref.ID, slack.MsgOptionChunks(taskChunk(t)))
		return err
	})
	if err == nil {
		c.live.card(ref.ID, t)
		c.taskSign(ref, t)
	}
	return err
}

// AppendWithTasks adds text and shows tasks as cards in stream ref, in
// one chat.appendStream: its chunks may be of several kinds (Slack's
// docs: markdown_text, task_update, plan_update, blocks; in the timeline
// display the cards show interleaved with the text), so an answer costs
// one append of the budget the workspace's answers share however many
// cards changed with its text (render.TaskAppender).
func (c *Connector) AppendWithTasks(ctx context.Context, ref connectors.Ref, text string, tasks []connectors.Task) error {
	sofar, ok := c.live.get(ref.ID)
	if !ok {
		c.live.wasPosted(ref.ID)
		return fmt.Errorf("slack: chat.appendStream: %w", connectors.ErrStreamEnded)
	}
	var chunks []slack.StreamChunk
	if text != "" {
		chunks = append(chunks, slack.NewMarkdownTextChunk(toMrkdwnStream(text)))
	}
	for _, t := range tasks {
		chunks = append(chunks, taskChunk(t))
	}
	if len(chunks) == 0 {
		return nil
	}
	err := c.streamCall(ctx, "chat.appendStream", ref, func() error {
		_, _, err := c.api.AppendStreamContext(ctx, ref.Channel, ref.ID, slack.MsgOptionChunks(chunks...))
		return err
	})
	if err != nil {
		return err
	}
	if text != "" {
		c.live.set(ref.ID, sofar+text)
	}
	for _, t := range tasks {
		c.live.card(ref.ID, t)
		c.taskSign(ref, t)
	}
	return nil
}

// card notes t as shown in stream ts, replacing its card of the same id.
func (s *streams) card(ts string, t connectors.Task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, live := s.text[ts]; !live {
		return
	}
	cards := s.cards[ts]
	if i := slices.IndexFunc(cards, func(c connectors.Task) bool { return c.ID == t.ID }); i >= 0 {
		cards[i] = t
		return
	}
	s.cards[ts] = append(cards, t)
}

// unfinished is the details of a card its stream stopped before the
// card's task ended: the turn stopped or failed. (A roll-over keeps the
// old stream open for its running cards: bot/render's hold.go.)
const unfinished = "not finished when this message stopped"

// closing is the final task_update of every card of stream ts still
// pending or in progress: an error, for the task had not ended when the
// stream stopped (a turn stopped, cut or failed).
func (s *streams) closing(ts string) []slack.StreamChunk {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []slack.StreamChunk
	for _, t := range s.cards[ts] {
		if t.Status == connectors.TaskComplete || t.Status == connectors.TaskError {
			continue
		}
		t.Status, t.Details = connectors.TaskError, unfinished
		out = append(out, taskChunk(t))
	}
	return out
}

// keepCards has stream ts's stop close none of its cards: the message
// goes on by edits, which show them.
func (s *streams) keepCards(ts string) {
	s.mu.Lock()
	delete(s.cards, ts)
	s.mu.Unlock()
}

// ended is every card of stream ts as its stop leaves it: those still
// open end as errors (closing).
func (s *streams) ended(ts string) []connectors.Task {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.cards[ts])
	for i, t := range out {
		if t.Status != connectors.TaskComplete && t.Status != connectors.TaskError {
			out[i].Status, out[i].Details = connectors.TaskError, unfinished
		}
	}
	return out
}

// taskChunk is t as Slack's task_update chunk.
func taskChunk(t connectors.Task) slack.TaskUpdateChunk {
	ch := slack.NewTaskUpdateChunk(t.ID, truncate(t.Title, maxTaskText))
	ch.Status = slack.TaskCardStatus(t.Status)
	ch.Details = truncate(t.Details, maxTaskText)
	ch.Output = truncate(t.Output, maxTaskText)
	return ch
}
