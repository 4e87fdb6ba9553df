package discord

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"

	"github.com/opsbot/opsbot/connectors"
)

// refusal is the plain-words error of a connection Discord will refuse
// again whatever the wait (a bad token, an intent not enabled), nil for
// one worth retrying.
func refusal(err error) error {
	var rest *discordgo.RESTError
	if errors.As(err, &rest) && rest.Response != nil && rest.Response.StatusCode == http.StatusUnauthorized {
		return errors.New("the bot token was refused by Discord: copy it again from the developer portal (Bot → Reset Token) into discord.token")
	}
	var closed *websocket.CloseError
	if !errors.As(err, &closed) {
		return nil
	}
	switch closed.Code {
	case 4004:
		return errors.New("the bot token was refused by Discord's gateway: copy it again from the developer portal (Bot → Reset Token) into discord.token")
	case 4014:
		return errors.New("the Message Content intent was refused by Discord: turn it on in the developer portal (Bot → Privileged Gateway Intents → Message Content Intent), or set discord.message_content: false")
	case 4013:
		return errors.New("the gateway intents opsbot asked for were refused by Discord; this is a bug in opsbot, please report it")
	}
	return nil
}

// plain is err in words fit for a log line: no request URL (a followup's
// holds the interaction's token), no Go error chain.
func plain(err error) string {
	var rest *discordgo.RESTError
	var ue *url.Error
	switch {
	case errors.As(err, &rest) && rest.Response != nil:
		msg := ""
		if rest.Message != nil {
			msg = fmt.Sprintf(": %s (code %d)", rest.Message.Message, rest.Message.Code)
		}
		return fmt.Sprintf("Discord answered %s%s", rest.Response.Status, msg)
	case errors.As(err, &ue):
		return "Discord's API did not answer: " + plainCause(ue.Err)
	}
	return err.Error()
}

func plainCause(err error) string {
	var w *errWait
	if errors.As(err, &w) {
		return w.Error()
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return plainCause(ue.Err)
	}
	return err.Error()
}

// apiError is what Post and Edit return for a failed call: a rate limit
// as connectors.RateLimitError, which the renderer's budget reads;
// anything else in plain words.
func apiError(what string, err error) error {
	if d, ok := retryAfterOf(err); ok {
		return &connectors.RateLimitError{RetryAfter: d}
	}
	return fmt.Errorf("discord: %s: %s", what, plain(err))
}

// discordgoRetryAfter reads discordgo's 429 (ShouldRetryOnRateLimit off).
func discordgoRetryAfter(err error) (time.Duration, bool) {
	var rl *discordgo.RateLimitError
	if errors.As(err, &rl) && rl.RateLimit != nil && rl.TooManyRequests != nil {
		return rl.RetryAfter, true
	}
	return 0, false
}

// restCode is the JSON error code of a REST error (10003: unknown
// channel), 0 for anything else.
func restCode(err error) int {
	var rest *discordgo.RESTError
	if errors.As(err, &rest) && rest.Message != nil {
		return rest.Message.Code
	}
	return 0
}
