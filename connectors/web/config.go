package web

import (
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Config is the `web` section of the config file.
type Config struct {
	// Listen is the address of the web chat, the API, /healthz, /readyz
	// and /metrics.
	Listen string `yaml:"listen"`
	// APIKey is the shared key for scripts: a client holding it posts as
	// ScriptUser, whatever it says, and cannot approve.
	APIKey string `yaml:"api_key"`
	// Users are people with a personal key: a client sending a key whose
	// SHA-256 is a user's KeySHA256 speaks as that user.
	Users []User `yaml:"users"`
	// TrustedProxies are the addresses (IPs or CIDR ranges) of reverse
	// proxies that sign people in (oauth2-proxy): from them, and only from
	// them, the user header X-Auth-Request-User (or X-Forwarded-User) names
	// the person.
	TrustedProxies []string `yaml:"trusted_proxies"`
	// PostRate is how many posts per second one client may make on
	// average (default 2), PostBurst how many at once (default 20); past
	// that a post is answered 429 with Retry-After.
	PostRate  float64 `yaml:"post_rate"`
	PostBurst int     `yaml:"post_burst"`
	// Retention is how long a thread is kept after its last message
	// (default 90 days, 2160h); older threads are deleted.
	Retention time.Duration `yaml:"retention"`
	// Channels are the chat's channels, in the order the page lists them
	// (default [ops]).
	Channels []string `yaml:"channels"`
	// OnBusy says what a message to the bot does while a turn already runs
	// in its thread: "queue" it for after the turn (default) or "cancel"
	// the running turn and start anew. The bot reads it.
	OnBusy string `yaml:"on_busy"`
}

// User is a person with a personal API key.
type User struct {
	// Name is the person's name in the chat and in approver rules.
	Name string `yaml:"name"`
	// KeySHA256 is the SHA-256 of their key in hex (printf %s KEY |
	// sha256sum): the config never holds the key itself.
	KeySHA256 string `yaml:"key_sha256"`
}

// ScriptUser is the fixed name of every client holding the shared
// api_key; it may post but not approve.
const ScriptUser = "api-key"

// Defaults of the post rate and of retention.
const (
	DefaultPostRate  = 2.0
	DefaultPostBurst = 20
	DefaultRetention = 90 * 24 * time.Hour
)

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
	if c.PostRate == 0 {
		c.PostRate = DefaultPostRate
	}
	if c.PostBurst == 0 {
		c.PostBurst = DefaultPostBurst
	}
	if c.Retention == 0 {
		c.Retention = DefaultRetention
	}
	return c
}

// channelName is what a channel may be called: it appears in URLs.
var channelName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}$`)

// Validate checks the listen address, that a non-loopback one is protected
// by a key or a signing-in proxy, the users, the proxies, the channel
// names, on_busy, the post rate and retention.
func (c Config) Validate() error {
	if problem := ListenProblem(c.Listen); problem != "" {
		return fieldError{"listen", problem}
	}
	host, _, _ := net.SplitHostPort(c.Listen)
	if !isLoopback(host) && !c.Authenticates() {
		return fieldError{"api_key", "is required when listen (" + c.Listen + ") is not a loopback address: set api_key, e.g. ${OPSBOT_WEB_API_KEY}, " +
			"users with personal keys, or trusted_proxies; or listen on 127.0.0.1"}
	}
	if err := c.validateUsers(); err != nil {
		return err
	}
	if _, err := c.proxies(); err != nil {
		return err
	}
	if c.PostRate < 0 || c.PostBurst < 0 {
		return fieldError{"post_rate", "must be positive: posts per second per client, e.g. 2 (post_burst e.g. 20)"}
	}
	if c.Retention < 0 {
		return fieldError{"retention", "must be a positive duration, e.g. 2160h (90 days)"}
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

// Authenticates reports whether anyone can be known by more than their
// word: a key or a signing-in proxy is configured.
func (c Config) Authenticates() bool {
	return c.APIKey != "" || len(c.Users) > 0 || len(c.TrustedProxies) > 0
}

func (c Config) validateUsers() error {
	names, keys := map[string]bool{}, map[string]bool{}
	for _, u := range c.Users {
		if msg := checkUser(u.Name); msg != "" {
			return fieldError{"users", fmt.Sprintf("name %q: %s", u.Name, strings.TrimPrefix(msg, "user: "))}
		}
		if b, err := hex.DecodeString(u.KeySHA256); err != nil || len(b) != 32 {
			return fieldError{"users", fmt.Sprintf("%s: key_sha256 must be the SHA-256 of the key as 64 hex digits: printf %%s \"$KEY\" | sha256sum", u.Name)}
		}
		if names[foldName(u.Name)] || keys[strings.ToLower(u.KeySHA256)] {
			return fieldError{"users", fmt.Sprintf("%s: each name and each key_sha256 may be listed once "+
				"(names that differ only in case, width or accents read as one)", u.Name)}
		}
		names[foldName(u.Name)], keys[strings.ToLower(u.KeySHA256)] = true, true
	}
	return nil
}

// proxies parses TrustedProxies: addresses or CIDR ranges.
func (c Config) proxies() ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, p := range c.TrustedProxies {
		pfx, err := netip.ParsePrefix(p)
		if err != nil {
			addr, aerr := netip.ParseAddr(p)
			if aerr != nil {
				return nil, fieldError{"trusted_proxies", fmt.Sprintf("%q is not an address or a CIDR range, e.g. 10.0.0.5 or 10.0.0.0/24", p)}
			}
			pfx = netip.PrefixFrom(addr, addr.BitLen())
		}
		out = append(out, pfx.Masked())
	}
	return out, nil
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

// ListenProblem says in words what is wrong with a listen address, or ""
// when it is host:port with a port number (a host name is looked up only
// when the bot listens).
func ListenProblem(addr string) string {
	const example = "write host:port, e.g. 127.0.0.1:8080"
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		if _, _, err := net.SplitHostPort(addr + ":8080"); err == nil {
			return fmt.Sprintf("%q has no port: %s", addr, example)
		}
		return fmt.Sprintf("%q is not a host and port: %s", addr, example)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Sprintf("%q is not a port: use a number from 1 to 65535, e.g. %s", port, net.JoinHostPort(host, "8080"))
	}
	return ""
}
