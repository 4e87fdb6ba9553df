package discord

import (
	"context"

	"github.com/bwmarrin/discordgo"

	"github.com/opsbot/opsbot/connectors"
)

// codeUnknownMessage is Discord's error code for a message that does not
// exist (deleted).
const codeUnknownMessage = 10008

// EndCut ends message ref, cut by a crash, with note after what it shows
// (issue 28 item 3). The bot's record, stored, may be behind what Discord
// shows (the process died between an edit and its record, or the bot's
// disk was full): the message is read back (GET channel message), and
// when it shows more than stored would, the note is posted below it in
// the thread, so that nothing shown is taken back; else the message
// becomes stored followed by the note. An error means it is not ended
// yet: call again later.
func (c *Connector) EndCut(ctx context.Context, ref connectors.Ref, stored, note string) error {
	shown, err := c.rest.ChannelMessage(channelOf(ref), ref.ID, discordgo.WithContext(ctx))
	switch {
	case restCode(err) == codeUnknownMessage:
		return nil // deleted: nothing left to end
	case err != nil:
		return apiError("reading a message back", err)
	}
	if shownChars(shown.Content, shown.Components) <= c.renderedChars(connectors.Message{Text: stored}) {
		return c.Edit(ctx, ref, connectors.Message{Text: stored + note})
	}
	_, err = c.Post(ctx, connectors.Dest{Platform: Platform, Workspace: ref.Workspace, Channel: ref.Channel, Thread: ref.Thread},
		connectors.Message{Text: trimNote(note)})
	return err
}

// renderedChars is how many characters m shows once rendered as Edit
// renders it: what a read-back is compared with.
func (c *Connector) renderedChars(m connectors.Message) int {
	if c.cfg.V2() {
		return shownChars("", c.renderV2(m))
	}
	r := c.render(m)
	return shownChars(r.content, r.components)
}

// shownChars counts the characters of a message's content and of its text
// displays (Components V2), containers and sections included.
func shownChars(content string, components []discordgo.MessageComponent) int {
	n := runes(content)
	for _, mc := range components {
		switch v := mc.(type) {
		case discordgo.TextDisplay:
			n += runes(v.Content)
		case *discordgo.TextDisplay:
			n += runes(v.Content)
		case discordgo.Container:
			n += shownChars("", v.Components)
		case *discordgo.Container:
			n += shownChars("", v.Components)
		case discordgo.Section:
			n += shownChars("", v.Components)
		case *discordgo.Section:
			n += shownChars("", v.Components)
		}
	}
	return n
}

// trimNote is the note as a message of its own: without the blank lines
// that set it apart under an answer.
func trimNote(note string) string {
	for len(note) > 0 && (note[0] == '\n' || note[0] == ' ') {
		note = note[1:]
	}
	return note
}
