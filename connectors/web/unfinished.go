package web

import (
	"context"
	"fmt"
	"slices"

	"github.com/opsbot/opsbot/connectors"
)

var (
	_ connectors.UnfinishedLister = (*Connector)(nil)
	_ connectors.ButtonFinder     = (*Connector)(nil)
)

// unfinishedScan is how many of a thread's newest messages Unfinished
// looks at: a message being written is among the last few.
const unfinishedScan = 200

// Unfinished lists the bot's messages among the newest of d's thread that
// are still being written, oldest first.
func (c *Connector) Unfinished(ctx context.Context, d connectors.Dest) ([]connectors.Shown, error) {
	c.hub.settle()
	stored, err := c.hub.archive.ThreadMessages(ctx, d.Thread, 0, unfinishedScan)
	if err != nil {
		return nil, fmt.Errorf("web: unfinished messages: %w", err)
	}
	var out []connectors.Shown
	for _, s := range slices.Backward(stored) {
		if !s.Bot || s.Finished {
			continue
		}
		m, err := fromStored(s)
		if err != nil {
			return nil, err
		}
		out = append(out, connectors.Shown{Ref: connectors.Ref{Platform: Platform, Channel: m.channel, Thread: m.thread, ID: m.id},
			Message: connectors.Message{Text: m.body.Text, Context: m.body.Context}})
	}
	return out, nil
}

// FindButton finds, among the newest messages of d's thread, the bot's
// latest message that shows the button (actionID, value).
func (c *Connector) FindButton(ctx context.Context, d connectors.Dest, actionID, value string) (connectors.Ref, bool, error) {
	c.hub.settle()
	stored, err := c.hub.archive.ThreadMessages(ctx, d.Thread, 0, unfinishedScan)
	if err != nil {
		return connectors.Ref{}, false, fmt.Errorf("web: find a button: %w", err)
	}
	for _, s := range stored { // newest first
		if !s.Bot {
			continue
		}
		m, err := fromStored(s)
		if err != nil {
			return connectors.Ref{}, false, err
		}
		if m.body.hasButton(actionID, value) {
			return connectors.Ref{Platform: Platform, Channel: m.channel, Thread: m.thread, ID: m.id}, true, nil
		}
	}
	return connectors.Ref{}, false, nil
}
