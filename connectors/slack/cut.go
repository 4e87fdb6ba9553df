package slack

import (
	"context"
	"errors"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/opsbot/opsbot/connectors"
)

// A message a previous process was writing when it was killed is ended
// by the next one's recovery. After the restart this process knows
// nothing of it (its set of live streams is empty): the message may still
// be a live stream (Slack ends one on its own only ~5 minutes after it
// started, and refuses chat.update on it with streaming_state_conflict),
// or a stream Slack ended, or a message going on by edits. What the
// recovery has on record may be behind what Slack shows (the process died
// between a change and its record, or the disk was full): the note is
// added after what is shown, never over less.

// EndCut ends message ref, cut by a crash, with note after what it shows.
// A live stream is stopped carrying the note (chat.stopStream appends it);
// any other message is read back (conversations.replies): when what it
// shows is no more than stored, the text on record, it becomes stored
// followed by the note (chat.update), else the note is posted below it in
// the thread, so that nothing shown is taken back. An error means the
// message is not ended yet (a rate limit, Slack unreachable): call again
// later.
func (c *Connector) EndCut(ctx context.Context, ref connectors.Ref, stored, note string) error {
	return c.EndCutCards(ctx, ref, stored, note, nil)
}

// EndCutCards is EndCut for a stream whose task cards in open were left
// pending or in progress: a live stream's stop carries, after the note,
// each card's final task_update (its status and output as in open), for
// once stopped a stream's cards can no longer change. A message no
// longer streaming is ended as EndCut does; its cards are as Slack left
// them.
func (c *Connector) EndCutCards(ctx context.Context, ref connectors.Ref, stored, note string, open []connectors.Task) error {
	return c.EndCutAnswer(ctx, ref, stored, note, open, "")
}

// EndCutAnswer is EndCutCards for the last message of an answer a crash
// cut: its end also carries the answer's feedback buttons for turn (the
// stored turn's id, as connectors.Message.Feedback), as every other final
// answer does — in the stop's blocks, the edit's, or under the note
// posted below it. An empty turn adds none.
func (c *Connector) EndCutAnswer(ctx context.Context, ref connectors.Ref, stored, note string, open []connectors.Task, turn string) error {
	opts := []slack.MsgOption{slack.MsgOptionMarkdownText(toMrkdwnStream(note))}
	if len(open) > 0 {
		chunks := []slack.StreamChunk{slack.NewMarkdownTextChunk(toMrkdwnStream(note))}
		for _, t := range open {
			chunks = append(chunks, taskChunk(t))
		}
		opts = []slack.MsgOption{slack.MsgOptionChunks(chunks...)}
	}
	if turn != "" {
		opts = append(opts, slack.MsgOptionBlocks(feedbackBlock(turn)))
	}
	err := c.call(ctx, "chat.stopStream", ref.Channel, func() error {
		_, _, err := c.api.StopStreamContext(ctx, ref.Channel, ref.ID, opts...)
		return err
	})
	switch {
	case err == nil:
		c.live.drop(ref.ID)
		return nil
	case hasCode(err, "message_not_found"):
		return nil // deleted: nothing left to end
	case !hasCode(err, "message_not_in_streaming_state") && !hasCode(err, "stopped_by_user"):
		return err
	}
	msg, refused, err := c.shown(ctx, ref)
	if err != nil && !refused {
		return err
	}
	if err == nil && !longer(shownWords(msg), stored) {
		// The update replaces what the message shows: the task cards it
		// shows (an answer going on by edits has them as blocks) stay,
		// those still open ended as the record says, or as unfinished.
		return c.update(ctx, ref, connectors.Message{Text: stored + note, Feedback: turn, Tasks: closeCards(blockCards(msg.Blocks), open)})
	}
	if err == nil {
		// What it shows is more than the record has: it stays as it is,
		// the note below it, but for its cards still open, ended, and
		// its buttons (Stop), gone.
		if err := c.endShown(ctx, ref, msg, open); err != nil {
			return err
		}
	}
	_, err = c.Post(ctx, connectors.Dest{Platform: Platform, Workspace: ref.Workspace, Channel: ref.Channel, Thread: ref.Thread}, connectors.Message{Text: trimNote(note), Feedback: turn})
	return err
}

// unrecordedScan is how many of the bot's newest messages in a thread
// EndCutIn looks at: a turn has one being written at a time, and the
// post a crash cut is among its last.
const unrecordedScan = 3

// EndCutIn ends, with note, the bot's messages in d's thread that are
// still live streams, among its newest few: a stream a killed process
// started and never recorded (its id unknown). It reports whether it
// ended one; when not, the caller says in the thread that the answer was
// cut.
func (c *Connector) EndCutIn(ctx context.Context, d connectors.Dest, note string) (bool, error) {
	me, err := c.me(ctx)
	if err != nil {
		return false, err
	}
	var msgs []slack.Message
	err = c.call(ctx, "conversations.replies", d.Channel, func() (err error) {
		msgs, _, _, err = c.api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: d.Channel, Timestamp: d.Thread})
		return err
	})
	if err != nil {
		return false, err
	}
	ended, seen := false, 0
	for i := len(msgs) - 1; i >= 0 && seen < unrecordedScan; i-- {
		if msgs[i].User != me || msgs[i].Timestamp == d.Thread {
			continue
		}
		seen++
		err := c.call(ctx, "chat.stopStream", d.Channel, func() error {
			_, _, err := c.api.StopStreamContext(ctx, d.Channel, msgs[i].Timestamp, slack.MsgOptionMarkdownText(toMrkdwnStream(note)))
			return err
		})
		switch {
		case err == nil:
			ended = true
		case !hasCode(err, "message_not_in_streaming_state") && !hasCode(err, "stopped_by_user") && !hasCode(err, "message_not_found"):
			return ended, err
		}
	}
	return ended, nil
}

// me is the bot's user id: recovery runs before the connector starts,
// and learns it by auth.test.
func (c *Connector) me(ctx context.Context) (string, error) {
	if id := c.botUser(); id != "" {
		return id, nil
	}
	var res *slack.AuthTestResponse
	err := c.call(ctx, "auth.test", "", func() (err error) {
		res, err = c.api.AuthTestContext(ctx)
		return err
	})
	if err != nil {
		return "", err
	}
	return res.UserID, nil
}

// shown is message ref as Slack shows it (conversations.replies): its
// text and blocks; refused says Slack answered, and no retry will change
// its answer (not a rate limit, not Slack out of reach).
func (c *Connector) shown(ctx context.Context, ref connectors.Ref) (msg slack.Message, refused bool, err error) {
	var msgs []slack.Message
	var answer slack.SlackErrorResponse
	err = c.call(ctx, "conversations.replies", ref.Channel, func() error {
		var err error
		msgs, _, _, err = c.api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
			ChannelID: ref.Channel, Timestamp: ref.Thread, Oldest: ref.ID, Latest: ref.ID, Inclusive: true, Limit: 1})
		refused = errors.As(err, &answer)
		return err
	})
	if err != nil {
		return slack.Message{}, refused, err
	}
	for _, m := range msgs {
		if m.Timestamp == ref.ID {
			return m, false, nil
		}
	}
	return slack.Message{}, true, &apiError{method: "conversations.replies", code: "message_not_found"}
}

// endShown ends message msg, cut by a crash, in place: the message is
// updated with its own text and blocks, but for each task card still
// open, ended as closeCards ends it, and its buttons (Stop: nothing runs
// any more), gone. Nothing else of it changes; a message with a block
// the connector cannot send back as it came is left as it is.
func (c *Connector) endShown(ctx context.Context, ref connectors.Ref, msg slack.Message, open []connectors.Task) error {
	closed := closeCards(blockCards(msg.Blocks), open)
	changed := false
	var blocks []slack.Block
	for _, b := range msg.Blocks.BlockSet {
		switch b := b.(type) {
		case *slack.UnknownBlock:
			return nil
		case *slack.ActionBlock:
			if b.BlockID == blockActions {
				changed = true
				continue
			}
		case *slack.TaskCardBlock:
			if b.Status == slack.TaskCardStatusComplete || b.Status == slack.TaskCardStatusError {
				break
			}
			if k := slices.IndexFunc(closed, func(t connectors.Task) bool { return t.ID == b.TaskID }); k >= 0 {
				blocks, changed = append(blocks, taskCard(closed[k])), true
				continue
			}
		}
		blocks = append(blocks, b)
	}
	if !changed {
		return nil
	}
	return c.call(ctx, "chat.update", ref.Channel, func() error {
		_, _, _, err := c.api.UpdateMessageContext(ctx, ref.Channel, ref.ID, slack.MsgOptionText(msg.Text, false), slack.MsgOptionBlocks(blocks...))
		return err
	})
}

// blockCards are the task cards of a message's task_card blocks.
func blockCards(blocks slack.Blocks) []connectors.Task {
	var out []connectors.Task
	for _, b := range blocks.BlockSet {
		if card, ok := b.(*slack.TaskCardBlock); ok {
			out = append(out, connectors.Task{ID: card.TaskID, Title: card.Title, Status: connectors.TaskStatus(card.Status),
				Details: richTextString(card.Details), Output: richTextString(card.Output)})
		}
	}
	return out
}

// richTextString is the plain text of a rich_text block's sections.
func richTextString(rt *slack.RichTextBlock) string {
	if rt == nil {
		return ""
	}
	var b strings.Builder
	for _, el := range rt.Elements {
		if sec, ok := el.(*slack.RichTextSection); ok {
			for _, e := range sec.Elements {
				if t, ok := e.(*slack.RichTextSectionTextElement); ok {
					b.WriteString(t.Text)
				}
			}
		}
	}
	return b.String()
}

// closeCards are the cards a cut message shows, and those on record as
// open it does not, each still open ended as an error: as the record
// closes it (recovery's words: the task's end is not known), else as
// unfinished.
func closeCards(shown, open []connectors.Task) []connectors.Task {
	out := slices.Clone(shown)
	for _, t := range open {
		k := slices.IndexFunc(out, func(s connectors.Task) bool { return s.ID == t.ID })
		switch {
		case k < 0:
			out = append(out, t)
		case out[k].Status != connectors.TaskComplete && out[k].Status != connectors.TaskError:
			out[k] = t
		}
	}
	for i, t := range out {
		if t.Status != connectors.TaskComplete && t.Status != connectors.TaskError {
			out[i].Status, out[i].Details = connectors.TaskError, unfinished
		}
	}
	return out
}

// shownWords is the answer's words message msg shows: the text of its
// sections and markdown blocks, where its blocks are all of kinds the
// connector sends (its cards, context line and buttons hold none of the
// answer's words, and its text is only their fallback: a card's title,
// the context line); else its text.
func shownWords(msg slack.Message) string {
	if len(msg.Blocks.BlockSet) == 0 {
		return msg.Text
	}
	var b strings.Builder
	for _, bl := range msg.Blocks.BlockSet {
		switch bl := bl.(type) {
		case *slack.SectionBlock:
			if bl.Text != nil {
				b.WriteString(bl.Text.Text)
			}
		case *slack.MarkdownBlock:
			b.WriteString(bl.Text)
		case *slack.TaskCardBlock, *slack.ContextBlock, *slack.ActionBlock, *slack.ContextActionsBlock:
		default:
			return msg.Text
		}
	}
	return b.String()
}

// longer reports whether shown, the text Slack shows, holds more than
// stored: it is longer than stored in either of the forms the connector
// sends it (mrkdwn in a message, markdown in a stream).
func longer(shown, stored string) bool {
	text, _ := render(connectors.Message{Text: stored})
	n := max(utf8.RuneCountInString(text), utf8.RuneCountInString(toMrkdwnStream(stored)))
	return utf8.RuneCountInString(shown) > n
}

// trimNote is the note as a message of its own: without the blank lines
// that set it apart under an answer.
func trimNote(note string) string {
	for len(note) > 0 && (note[0] == '\n' || note[0] == ' ') {
		note = note[1:]
	}
	return note
}
