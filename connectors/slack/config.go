package slack

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// The values of Config.Mode.
const (
	ModeSocket = "socket"
	ModeHTTP   = "http"
)

// DefaultAPIURL is Slack's Web API base.
const DefaultAPIURL = "https://slack.com/api/"

// Config is the `slack` section of the config file. The connector is on
// when BotToken is set.
type Config struct {
	// Mode is "socket" (default: Socket Mode, no public URL needed) or
	// "http" (the Events API posts to /slack/events and /slack/actions on
	// the web listener).
	Mode string `yaml:"mode"`
	// BotToken is the bot user's OAuth token (xoxb-…).
	BotToken string `yaml:"bot_token"`
	// AppToken is the app-level token (xapp-…, scope connections:write)
	// Socket Mode connects with.
	AppToken string `yaml:"app_token"`
	// SigningSecret verifies the requests of HTTP mode.
	SigningSecret string `yaml:"signing_secret"`
	// APIURL is the Web API base (GovSlack, a proxy); default
	// https://slack.com/api/.
	APIURL string `yaml:"api_url"`
	// NativeStreaming prefers chat.startStream for answers (default true);
	// false streams by chat.update edits.
	NativeStreaming *bool `yaml:"native_streaming"`
}

// Enabled reports whether the connector is on: a bot token is set.
func (c Config) Enabled() bool { return c.BotToken != "" }

// WithDefaults fills what the file left empty.
func (c Config) WithDefaults() Config {
	if c.Mode == "" {
		c.Mode = ModeSocket
	}
	if c.APIURL == "" {
		c.APIURL = DefaultAPIURL
	}
	if !strings.HasSuffix(c.APIURL, "/") {
		c.APIURL += "/"
	}
	if c.NativeStreaming == nil {
		on := true
		c.NativeStreaming = &on
	}
	return c
}

// Streams reports whether answers use native streaming.
func (c Config) Streams() bool { return c.NativeStreaming == nil || *c.NativeStreaming }

// fieldErr is a validation error about one key; Field names it for the
// config loader.
type fieldErr struct{ key, msg string }

func (e fieldErr) Error() string { return e.key + ": " + e.msg }

// Field is the key in error.
func (e fieldErr) Field() string { return e.key }

// Validate checks the section; a section with no token at all is valid
// (the connector is off). It names the token the chosen mode is missing.
func (c Config) Validate() error {
	var errs []error
	mode := c.Mode
	if mode == "" {
		mode = ModeSocket
	}
	if mode != ModeSocket && mode != ModeHTTP {
		errs = append(errs, fieldErr{"mode", fmt.Sprintf("%q is not a mode: use socket (no public URL needed) or http (Slack posts to /slack/events)", c.Mode)})
	}
	if c.APIURL != "" {
		if u, err := url.Parse(c.APIURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			errs = append(errs, fieldErr{"api_url", "is not a URL: write the Web API base, e.g. https://slack.com/api/"})
		}
	}
	if !c.Enabled() {
		if c.AppToken != "" || c.SigningSecret != "" {
			errs = append(errs, fieldErr{"bot_token", "is missing: the Slack connector needs the bot token (xoxb-…, OAuth & Permissions page of the app), e.g. bot_token: ${SLACK_BOT_TOKEN}"})
		}
		return errors.Join(errs...)
	}
	if !strings.HasPrefix(c.BotToken, "xoxb-") {
		errs = append(errs, fieldErr{"bot_token", "is not a bot token: it starts with xoxb- (OAuth & Permissions page of the app)"})
	}
	switch mode {
	case ModeSocket:
		if c.AppToken == "" {
			errs = append(errs, fieldErr{"app_token", "is missing: socket mode needs the app-level token (xapp-…, scope connections:write, Basic Information page of the app), e.g. app_token: ${SLACK_APP_TOKEN}; or set mode: http with signing_secret"})
		} else if !strings.HasPrefix(c.AppToken, "xapp-") {
			errs = append(errs, fieldErr{"app_token", "is not an app-level token: it starts with xapp- (Basic Information page of the app)"})
		}
	case ModeHTTP:
		if c.SigningSecret == "" {
			errs = append(errs, fieldErr{"signing_secret", "is missing: http mode needs the app's signing secret (Basic Information page of the app), e.g. signing_secret: ${SLACK_SIGNING_SECRET}"})
		}
	}
	return errors.Join(errs...)
}
