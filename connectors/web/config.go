package web

import (
	"net"
	"net/netip"
)

// Config is the `web` section of the config file.
type Config struct {
	// Listen is the address of the web chat, the API, /healthz, /readyz
	// and /metrics.
	Listen string `yaml:"listen"`
	// APIKey is required from non-local clients, and before Listen may be
	// anything but a loopback address.
	APIKey string `yaml:"api_key"`
}

// DefaultListen is where the embedded default listens.
const DefaultListen = "127.0.0.1:8080"

// WithDefaults fills what the file left empty.
func (c Config) WithDefaults() Config {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	return c
}

// Validate checks the listen address, and that a non-loopback one is
// protected by an API key.
func (c Config) Validate() error {
	host, _, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return fieldError{"listen", "must be host:port, e.g. 127.0.0.1:8080: " + err.Error()}
	}
	if !isLoopback(host) && c.APIKey == "" {
		return fieldError{"api_key", "is required when listen (" + c.Listen + ") is not a loopback address: set api_key, e.g. ${OPSBOT_WEB_API_KEY}, or listen on 127.0.0.1"}
	}
	return nil
}

// IsLoopback reports whether host (a name or an IP) is this machine only.
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
