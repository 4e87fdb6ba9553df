package slack

import (
	"context"
	"fmt"
	"time"

	"github.com/slack-go/slack"

	"github.com/opsbot/opsbot/connectors"
)

// call runs one Web API call of method within its budget: it waits for
// the budget, makes the call, and turns a 429 into a
// connectors.RateLimitError (the caller waits; a person never sees it).
func (c *Connector) call(ctx context.Context, method, channel string, fn func() error) error {
	team := c.team()
	if err := c.bud.wait(ctx, team, method, channel); err != nil {
		return fmt.Errorf("slack: %s: %w", method, err)
	}
	if err := c.bud.limited(team, method, channel, fn()); err != nil {
		if _, ok := connectors.RetryAfter(err); ok {
			return err
		}
		return &apiError{method: method, code: errorCode(err)}
	}
	return nil
}

// callNow is call without the wait: when the method's budget has nothing
// left now it reports false and makes no call.
func (c *Connector) callNow(ctx context.Context, method, channel string, fn func() error) (called bool, err error) {
	team := c.team()
	if !c.bud.allow(team, method, channel) {
		return false, nil
	}
	if err := c.bud.limited(team, method, channel, fn()); err != nil {
		if _, ok := connectors.RetryAfter(err); ok {
			return true, err
		}
		return true, &apiError{method: method, code: errorCode(err)}
	}
	return true, nil
}

// apiError is Slack's refusal of a call: the method and Slack's error
// code (never a token, never a request's content).
type apiError struct{ method, code string }

func (e *apiError) Error() string { return "slack: " + e.method + ": " + e.code }

// ref names message ts of channel, in thread (the message's own ts when
// it starts one).
func (c *Connector) ref(channel, thread, ts string) connectors.Ref {
	if thread == "" {
		thread = ts
	}
	return connectors.Ref{Platform: Platform, Workspace: c.team(), Channel: channel, Thread: thread, ID: ts}
}

// Post adds a complete message to d's thread (chat.postMessage).
func (c *Connector) Post(ctx context.Context, d connectors.Dest, m connectors.Message) (connectors.Ref, error) {
	text, blocks := render(m)
	opts := []slack.MsgOption{slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...)}
	if d.Thread != "" {
		opts = append(opts, slack.MsgOptionTS(d.Thread))
		if m.Broadcast {
			opts = append(opts, slack.MsgOptionBroadcast())
		}
	}
	var ts string
	err := c.call(ctx, "chat.postMessage", d.Channel, func() (err error) {
		_, ts, err = c.api.PostMessageContext(ctx, d.Channel, opts...)
		return err
	})
	if err != nil {
		return connectors.Ref{}, err
	}
	ref := c.ref(d.Channel, d.Thread, ts)
	c.cardsSign(ref, m.Tasks)
	return ref, nil
}

// Edit replaces a posted message (chat.update). A message still being
// streamed is stopped first: Slack refuses to update a live stream
// (streaming_state_conflict).
func (c *Connector) Edit(ctx context.Context, ref connectors.Ref, m connectors.Message) error {
	if c.live.has(ref.ID) {
		if err := c.stop(ctx, ref, "", nil); err != nil && !isEnded(err) {
			return err
		}
	}
	c.live.editing(ref.ID, time.Now())
	if err := c.update(ctx, ref, m); err != nil {
		return err
	}
	c.cardsSign(ref, m.Tasks)
	return nil
}

func (c *Connector) update(ctx context.Context, ref connectors.Ref, m connectors.Message) error {
	text, blocks := render(m)
	return c.call(ctx, "chat.update", ref.Channel, func() error {
		_, _, _, err := c.api.UpdateMessageContext(ctx, ref.Channel, ref.ID, slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...))
		return err
	})
}

// respond answers person user alone in ref's thread (chat.postEphemeral).
func (c *Connector) respond(ctx context.Context, channel, thread, user, text string) error {
	fallback, blocks := render(connectors.Message{Text: text})
	opts := []slack.MsgOption{slack.MsgOptionText(fallback, false), slack.MsgOptionBlocks(blocks...)}
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	return c.call(ctx, "chat.postEphemeral", channel, func() error {
		_, err := c.api.PostEphemeralContext(ctx, channel, user, opts...)
		return err
	})
}
