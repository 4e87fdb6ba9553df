package web

import (
	"fmt"
	"net"
	"net/netip"
	"regexp"
)

// Config is the `web` section of the config file.
type Config struct {
	// Listen is the address of the web chat, the API, /healthz, /readyz
	// and /metrics.
	Listen string `yaml:"listen"`
	// APIKey is required from non-local clients, and before Listen may be
	// anything but a loopback address.
	APIKey string `yaml:"api_key"`
	// Channels are the chat's channels, in the order the page lists them
	// (default [ops]).
	Channels []string `yaml:"channels"`
	// OnBusy says what a message to the bot does while a turn already runs
	// in its thread: "queue" it for after the turn (default) or "cancel"
	// the running turn and start anew. The bot reads it.
	OnBusy string `yaml:"on_busy"`
}

// DefaultListen is where the embedded default listens.
const DefaultListen = "127.0.0.1:8080"

// DefaultChannel is the one channel of a config that names none.
const DefaultChannel = "ops"

// The values of Config.OnBusy.
const (
	OnBusyQueue  = "queue"
	OnBusyCancel = "cancel"
)

// WithDefaults fills what the file left empty.
func (c Config) WithDefaults() Config {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if len(c.Channels) == 0 {
		c.Channels = []string{DefaultChannel}
	}
	if c.OnBusy == "" {
		c.OnBusy = OnBusyQueue
	}
	return c
}

// channelName is what a channel may be called: it appears in URLs.
var channelName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}$`)

// Validate checks the listen address, that a non-loopback one is protected
// by an API key, the channel names and on_busy.
func (c Config) Validate() error {
	host, _, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return fieldError{"listen", "must be host:port, e.g. 127.0.0.1:8080: " + err.Error()}
	}
	if !isLoopback(host) && c.APIKey == "" {
		return fieldError{"api_key", "is required when listen (" + c.Listen + ") is not a loopback address: set api_key, e.g. ${OPSBOT_WEB_API_KEY}, or listen on 127.0.0.1"}
	}
	seen := map[string]bool{}
	for _, ch := range c.Channels {
		if !channelName.MatchString(ch) {
			return fieldError{"channels", fmt.Sprintf("%q is not a channel name: use up to 40 of a-z, 0-9, _ and -, starting with a letter or digit", ch)}
		}
		if seen[ch] {
			return fieldError{"channels", fmt.Sprintf("%q is listed twice", ch)}
		}
		seen[ch] = true
	}
	switch c.OnBusy {
	case "", OnBusyQueue, OnBusyCancel:
	default:
		return fieldError{"on_busy", fmt.Sprintf("%q is not a choice: use queue or cancel", c.OnBusy)}
	}
	return nil
}

// isLoopback reports whether host (a name or an IP) is this machine only.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	addr, err := netip.ParseAddr(host)
	return err == nil && addr.IsLoopback()
}

// fieldError is a validation error about one key of this section.
type fieldError struct{ key, msg string }

func (e fieldError) Error() string { return e.key + ": " + e.msg }

// Field is the key's name within the section.
func (e fieldError) Field() string { return e.key }
