package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/opsbot/opsbot/connectors"
)

// runSocket receives events over Socket Mode until ctx ends or Slack
// refuses a token. slack-go reconnects on Slack's disconnect and when no
// ping came for PingInterval (the watchdog); a connection that fails
// otherwise is made anew after a back-off.
func (c *Connector) runSocket(ctx context.Context) error {
	backoff := time.Second
	for {
		err := c.socketOnce(ctx)
		if ctx.Err() != nil {
			return err
		}
		if fatalAuth(err) {
			return appTokenRefused(err)
		}
		c.setDown(fmt.Errorf("slack: Socket Mode connection lost (%s); reconnecting", errorCode(err)))
		c.log.Warn("slack: Socket Mode connection lost; reconnecting", "err", errorCode(err), "in", backoff)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		backoff = min(backoff*2, time.Minute)
	}
}

// socketOnce runs one socketmode client until it fails.
func (c *Connector) socketOnce(ctx context.Context) error {
	opts := []socketmode.Option{socketmode.OptionPingInterval(c.opt.PingInterval)}
	if c.opt.Dialer != nil {
		opts = append(opts, socketmode.OptionDialer(c.opt.Dialer))
	}
	smc := socketmode.New(c.api, opts...)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- smc.RunContext(runCtx) }()
	var fatal error
	for {
		select {
		case err := <-ran:
			if fatal != nil {
				return fatal
			}
			if err == nil {
				err = errors.New("the connection ended")
			}
			return err
		case evt := <-smc.Events:
			if err := c.socketEvent(smc, evt); err != nil && fatal == nil {
				fatal = err
				cancel()
			}
		}
	}
}

// socketEvent acts on one Socket Mode event: an envelope for the bot is
// acknowledged once the Handler has it on record (connectors.Handler),
// any other at once. It returns a refusal of a token.
func (c *Connector) socketEvent(smc *socketmode.Client, evt socketmode.Event) error {
	switch evt.Type {
	case socketmode.EventTypeEventsAPI, socketmode.EventTypeInteractive:
		if evt.Request == nil {
			return nil
		}
		req := *evt.Request
		ev, ok := c.envelope(evt.Type, req.Payload)
		if !ok {
			smc.Ack(req)
			return nil
		}
		c.accept(inbound{ev: ev, ack: func(err error) {
			if err == nil {
				smc.Ack(req)
			}
		}})
	case socketmode.EventTypeSlashCommand:
		if evt.Request != nil {
			smc.Ack(*evt.Request)
		}
	case socketmode.EventTypeHello, socketmode.EventTypeConnected:
		c.setDown(nil)
	case socketmode.EventTypeConnectionError:
		if ce, ok := evt.Data.(*slack.ConnectionErrorEvent); ok && ce.ErrorObj != nil {
			err := ce.ErrorObj
			if fatalAuth(err) {
				return err
			}
			c.setDown(fmt.Errorf("slack: cannot connect to Socket Mode (%s); retrying", errorCode(err)))
			c.log.Debug("slack: Socket Mode connection failed; retrying", "err", errorCode(err), "in", ce.Backoff)
		}
	case socketmode.EventTypeInvalidAuth:
		return errors.New("invalid_auth")
	}
	return nil
}

// envelope is the event an envelope's payload carries for the bot; false
// when it carries none.
func (c *Connector) envelope(kind socketmode.EventType, payload json.RawMessage) (connectors.Event, bool) {
	if kind == socketmode.EventTypeInteractive {
		return c.click(payload)
	}
	var cb callback
	if json.Unmarshal(payload, &cb) != nil || cb.Type != "event_callback" {
		return connectors.Event{}, false
	}
	return c.message(cb)
}
