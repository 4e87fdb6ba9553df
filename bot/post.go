package bot

import (
	"context"

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
		if !sleep(ctx, wait) {
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
