package discord

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Config is the `discord` section of the config file. The connector is on
// when Token is set.
type Config struct {
	// Token is the bot's token from the developer portal (Bot → Reset
	// Token), without the "Bot " prefix.
	Token string `yaml:"token"`
	// APIURL is the base of Discord's REST API (default
	// https://discord.com/), another one being a REST proxy such as a
	// shared rate-limit proxy; the gateway's address comes from its
	// GET /api/v9/gateway.
	APIURL string `yaml:"api_url"`
	// MessageContent asks for the privileged Message Content intent
	// (toggled in the developer portal), which only follow-ups without a
	// mention need: without it Discord sends the bot the text of mentions
	// and direct messages alone.
	MessageContent bool `yaml:"message_content"`
	// ComponentsV2 renders messages with Discord's Components V2
	// (the IS_COMPONENTS_V2 flag): answers as text displays of up to
	// 4,000 characters, approval cards as a container. Unset is true;
	// false keeps the older content-and-embeds rendering of 2,000
	// characters, the way back should a client or proxy not show V2.
	ComponentsV2 *bool `yaml:"components_v2"`
}

// DefaultAPIURL is Discord's own REST API.
const DefaultAPIURL = "https://discord.com/"

// Enabled says whether the connector is configured.
func (c Config) Enabled() bool { return c.Token != "" }

// WithDefaults fills in the API URL.
func (c Config) WithDefaults() Config {
	if c.APIURL == "" {
		c.APIURL = DefaultAPIURL
	}
	return c
}

// V2 says whether messages are rendered with Components V2 (the default).
func (c Config) V2() bool { return c.ComponentsV2 == nil || *c.ComponentsV2 }

// Validate says, in plain words, what is wrong with the section.
func (c Config) Validate() error {
	var errs []error
	if c.Token != "" {
		switch {
		case strings.HasPrefix(strings.ToLower(c.Token), "bot "):
			errs = append(errs, fieldError{"token", `starts with "Bot ": give the token alone, opsbot adds the prefix`})
		case strings.ContainsAny(c.Token, " \t\r\n"):
			errs = append(errs, fieldError{"token", "holds a blank or a line break: copy the token again from the developer portal (Bot → Reset Token)"})
		}
	}
	if c.APIURL != "" {
		u, err := url.Parse(c.APIURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			errs = append(errs, fieldError{"api_url", fmt.Sprintf("%q is not a web address: use https://discord.com/ or your REST proxy's address", c.APIURL)})
		}
	}
	return errors.Join(errs...)
}

// fieldError is a problem with one key of the section; Field names it
// for the config loader, which points at its line.
type fieldError struct{ key, msg string }

func (e fieldError) Error() string { return e.key + ": " + e.msg }

// Field is the key in error.
func (e fieldError) Field() string { return e.key }
