package bot

import (
	"context"
	"fmt"

	"github.com/opsbot/opsbot/bot/render"
	"github.com/opsbot/opsbot/connectors"
)

// maxRateRetries bounds how often one request is sent again after the
// platform asked to slow down.
const maxRateRetries = 5

// retryLimited calls fn again after the wait a rate limit asks for, a few
// times; the waits end with ctx.
func retryLimited(ctx context.Context, fn func() error) error {
	var err error
	for range maxRateRetries {
		if err = fn(); err == nil {
			return nil
		}
		wait, limited := connectors.RetryAfter(err)
		if !limited {
			return err
		}
		if !render.Sleep(ctx, wait) {
			return context.Cause(ctx)
		}
	}
	return err
}

// editRetrying edits a message, waiting out the platform's rate limits a
// few times: a card must end up showing the decision.
func editRetrying(ctx context.Context, c connectors.Connector, ref connectors.Ref, m connectors.Message) error {
	return retryLimited(ctx, func() error { return c.Edit(ctx, ref, m) })
}

// fit keeps a message within what its platform takes that the bot does
// not arrange for otherwise (redactedConn applies it to every message): no more buttons than a message may carry (the
// first ones, which are the ones that matter: Approve before Deny).
func fit(m connectors.Message, l connectors.Limits) connectors.Message {
	if l.MaxButtons > 0 && len(m.Buttons) > l.MaxButtons {
		m.Buttons = m.Buttons[:l.MaxButtons]
	}
	return m
}

// destOf is the event's thread, answering the event's person.
func destOf(ev connectors.Event) connectors.Dest {
	return connectors.Dest{Platform: ev.Platform, Workspace: ev.Workspace, Channel: ev.Channel, Thread: ev.Thread, Recipient: ev.User}
}

// reply posts a plain message into the event's thread.
func (b *Bot) reply(ctx context.Context, ev connectors.Event, text string) {
	if _, err := b.post(ctx, destOf(ev), connectors.Message{Text: text}); err != nil {
		b.log().Warn("post reply", "channel", ev.Channel, "err", err)
	}
}

// post posts a complete message to d, within its platform's limits and
// waiting out its rate limits a few times.
func (b *Bot) post(ctx context.Context, d connectors.Dest, m connectors.Message) (connectors.Ref, error) {
	c, ok := b.conn(d.Platform)
	if !ok {
		return connectors.Ref{}, fmt.Errorf("bot: no %q connector", d.Platform)
	}
	var ref connectors.Ref
	err := retryLimited(ctx, func() (err error) {
		ref, err = c.Post(ctx, d, m)
		return err
	})
	return ref, err
}
