package mcp

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/opsbot/opsbot/approvals/redact"
)

// Config is the `mcp` section of the config file.
type Config struct {
	// Servers are the MCP servers by name; the name prefixes their tools
	// for the model (NAME__TOOL).
	Servers map[string]ServerConfig `yaml:"servers"`
}

// ServerConfig is one entry of mcp.servers.
type ServerConfig struct {
	// Type is stdio (a command opsbot starts) or http (streamable HTTP).
	Type string `yaml:"type"`
	// URL is the endpoint of an http server.
	URL string `yaml:"url"`
	// Headers are sent with every request to an http server
	// (Authorization: "Bearer ${TOKEN}"); their values are secrets.
	Headers map[string]string `yaml:"headers"`
	// Command and Args start a stdio server.
	Command string   `yaml:"command"`
	Args    []string `yaml:"args"`
	// Env is the whole environment of a stdio server: it gets nothing of
	// opsbot's own (no PATH either, unless listed here).
	Env map[string]string `yaml:"env"`
	// Timeout bounds each call (default 30s): a hung server answers
	// "no answer within" at the deadline.
	Timeout time.Duration `yaml:"timeout"`
	// MaxOutput is how much of a result is kept (default 64KiB); the rest
	// is cut, and the result says so.
	MaxOutput ByteSize `yaml:"max_output"`
	// Default decides the tools Tools does not name (default approve).
	Default Decision `yaml:"default"`
	// Tools decides tools by their name on the server.
	Tools map[string]Decision `yaml:"tools"`
}

// The server types.
const (
	TypeStdio = "stdio"
	TypeHTTP  = "http"
)

// Defaults of a server's settings.
const (
	DefaultTimeout   = 30 * time.Second
	DefaultMaxOutput = 64 << 10
)

// WithDefaults fills in the unset settings.
func (c ServerConfig) WithDefaults() ServerConfig {
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxOutput == 0 {
		c.MaxOutput = DefaultMaxOutput
	}
	if c.Default == "" {
		c.Default = Approve
	}
	return c
}

// Names are the servers' names, sorted.
func (c Config) Names() []string {
	names := make([]string, 0, len(c.Servers))
	for n := range c.Servers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// FieldError is a problem with one key of the section, relative to it
// ("servers.grafana.url").
type FieldError struct{ Key, Msg string }

// Error is the key and the problem: "servers.grafana.url: …".
func (e FieldError) Error() string { return e.Key + ": " + e.Msg }

// Field is the key the problem is about.
func (e FieldError) Field() string { return e.Key }

var serverName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]|_[a-z0-9-])*$`)

// Validate reports every problem of the section, in words for the person
// who edits the file.
func (c Config) Validate() error {
	var errs []error
	for _, name := range c.Names() {
		errs = append(errs, c.Servers[name].validate("servers."+name, name)...)
	}
	return errors.Join(errs...)
}

func (c ServerConfig) validate(key, name string) []error {
	var errs []error
	bad := func(k, format string, args ...any) {
		errs = append(errs, FieldError{join(key, k), fmt.Sprintf(format, args...)})
	}
	if !serverName.MatchString(name) || len(name) > 30 {
		bad("", "a server's name is up to 30 lower-case letters, digits, - and single _ (it begins the names of its tools: %s__TOOL)", "NAME")
	}
	switch c.Type {
	case TypeStdio:
		c.validateStdio(bad)
	case TypeHTTP:
		c.validateHTTP(bad)
	case "":
		bad("type", "say how opsbot reaches the server: stdio (a command it starts) or http (streamable HTTP at url)")
	default:
		bad("type", "%q is not a server type: use stdio or http", c.Type)
	}
	if c.Timeout < 0 {
		bad("timeout", "a call's time limit must be positive, e.g. 30s")
	}
	switch {
	case c.MaxOutput == notASize:
		bad("max_output", "not a size: write e.g. 65536, 64KiB or 1MiB")
	case c.MaxOutput < 0:
		bad("max_output", "the size kept of a result must be positive, e.g. 64KiB")
	}
	if c.Default != "" && !c.Default.valid() {
		bad("default", "%q is not a decision: use allow, approve or deny", c.Default)
	}
	for _, tool := range slices.Sorted(maps.Keys(c.Tools)) {
		if d := c.Tools[tool]; !d.valid() {
			bad("tools."+tool, "%q is not a decision: use allow, approve or deny", d)
		}
	}
	return errs
}

func (c ServerConfig) validateStdio(bad func(k, format string, args ...any)) {
	if strings.TrimSpace(c.Command) == "" {
		bad("command", "a stdio server needs the command that starts it, e.g. /usr/local/bin/kubernetes-mcp-server")
	}
	if c.URL != "" {
		bad("url", "url is for type: http; a stdio server is started with command")
	}
	if len(c.Headers) > 0 {
		bad("headers", "headers are for type: http; give a stdio server what it needs in env")
	}
	for _, k := range slices.Sorted(maps.Keys(c.Env)) {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			bad("env", "%q is not an environment variable name", k)
		}
	}
}

func (c ServerConfig) validateHTTP(bad func(k, format string, args ...any)) {
	u, err := url.Parse(c.URL)
	switch {
	case c.URL == "":
		bad("url", "an http server needs its endpoint, e.g. https://grafana-mcp.internal/mcp")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		bad("url", "%q is not an http:// or https:// address", c.URL)
	}
	if c.Command != "" || len(c.Args) > 0 {
		bad("command", "command and args are for type: stdio; an http server is reached at url")
	}
	if len(c.Env) > 0 {
		bad("env", "env is for type: stdio; send an http server what it needs in headers")
	}
}

// Secrets are the values the redactor must hide: every header value, and
// the env values whose names say they are secret.
func (c Config) Secrets() []string {
	var out []string
	for _, s := range c.Servers {
		for _, v := range s.Headers {
			out = append(out, v)
			if _, token, ok := strings.Cut(v, " "); ok {
				out = append(out, token) // "Bearer TOKEN": the token alone too
			}
		}
		for k, v := range s.Env {
			if redact.IsSecretName(k) {
				out = append(out, v)
			}
		}
	}
	return out
}

// ByteSize is a size in bytes, written as a number or with a unit: 65536,
// 64KiB, 1MiB, 500KB.
type ByteSize int64

var sizeUnits = map[string]int64{"": 1, "b": 1, "kb": 1000, "kib": 1 << 10, "k": 1 << 10, "mb": 1000_000, "mib": 1 << 20, "m": 1 << 20}

// notASize is a max_output that could not be read.
const notASize ByteSize = -1 << 62

// UnmarshalText reads a size with its unit.
func (b *ByteSize) UnmarshalText(text []byte) error {
	s := strings.TrimSpace(string(text))
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		i = len(s)
	}
	n, err := strconv.ParseFloat(s[:i], 64)
	unit, ok := sizeUnits[strings.ToLower(strings.TrimSpace(s[i:]))]
	if err != nil || !ok {
		// Validate says so with the key and its line: an error here
		// would stop the decoder and hide the file's other problems.
		*b = notASize
		return nil
	}
	*b = ByteSize(n * float64(unit))
	return nil
}

func join(prefix, key string) string {
	if key == "" {
		return prefix
	}
	return prefix + "." + key
}
