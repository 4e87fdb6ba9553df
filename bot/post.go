package bot

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/opsbot/opsbot/bot/render"
	"github.com/opsbot/opsbot/connectors"
)

// poster is the connector set as a part sees it (*Platforms is one): a
// platform's connector, a message posted, a plain reply.
type poster interface {
	replier
	conn(platform string) (connectors.Connector, bool)
	post(ctx context.Context, d connectors.Dest, m connectors.Message) (connectors.Ref, error)
}

// replier answers in an event's thread.
type replier interface {
	reply(ctx context.Context, ev connectors.Event, text string)
}

var _ poster = (*Platforms)(nil)

// respond answers the clicker alone where the platform can, else in the
// thread.
func respond(ctx context.Context, out replier, ev connectors.Event, text string) {
	if ev.Respond != nil {
		if err := ev.Respond(ctx, text); err == nil {
			return
		}
	}
	out.reply(ctx, ev, text)
}

// internalError logs err with an id and tells the thread only the id.
func internalError(ctx context.Context, out replier, log *slog.Logger, ev connectors.Event, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	id := errorID()
	log.Error("internal error", "id", id, "err", err)
	out.reply(ctx, ev, "Internal error (id "+id+"); the operator's log has the details.")
}

// errorID names one logged error for the person who saw it fail.
func errorID() string { return strconv.FormatInt(time.Now().UnixNano()%1_000_000_000, 36) }

// maxText is the most text one message holds on the event's platform.
func maxText(out poster, ev connectors.Event) int {
	if c, ok := out.conn(ev.Platform); ok && c.Limits().MaxText > 0 {
		return c.Limits().MaxText
	}
	return 3000
}

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
// not arrange for otherwise (redactedConn applies it to every message): no
// more buttons than a message may carry (the first ones, which are the
// ones that matter: Approve before Deny).
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
