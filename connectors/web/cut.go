package web

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/opsbot/opsbot/connectors"
)

// EndCut ends message ref, cut by a crash, with note after what it shows
// (issue 28 item 3). The bot's record of the message, stored, may be
// behind what the web chat shows and keeps (the process died between a
// change and its record, or the bot's disk was full): the note then goes
// after what is shown, which is never taken back. A message still being
// written is completed; one already complete is edited.
func (c *Connector) EndCut(ctx context.Context, ref connectors.Ref, stored, note string) error {
	ending := func(m *message) body {
		b := toBody(connectors.Message{Text: stored + note})
		if shown := m.body.Text; utf8.RuneCountInString(shown) > utf8.RuneCountInString(toBody(connectors.Message{Text: stored}).Text) {
			b.Text = shown + toBody(connectors.Message{Text: note}).Text
		}
		return c.noteSelfNamed(b)
	}
	err := c.hub.edit(ctx, ref.ID, ending, stopStream)
	if errors.Is(err, connectors.ErrStreamEnded) {
		err = c.hub.edit(ctx, ref.ID, ending, editAny)
	}
	if err != nil {
		return fmt.Errorf("web: end a cut message: %w", err)
	}
	return nil
}
