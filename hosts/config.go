package hosts

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// Config is the inventory section of the config file: the top-level `ssh`,
// `hosts` and `exec` keys.
type Config struct {
	SSH   SSHConfig    `yaml:"ssh"`
	Hosts []HostConfig `yaml:"hosts"`
	Exec  ExecConfig   `yaml:"exec"`
}

// SSHConfig holds what every SSH host shares.
type SSHConfig struct {
	// KnownHosts is the OpenSSH known_hosts file used to verify host keys;
	// required as soon as one SSH host is configured.
	KnownHosts string `yaml:"known_hosts"`
	// IdentityFiles are private keys to offer; the ssh-agent at
	// SSH_AUTH_SOCK is used as well when it is set.
	IdentityFiles []string `yaml:"identity_files"`
	// User is the default remote user (default: the user the bot runs as).
	User string `yaml:"user"`
	// ReadOnlyUser is the account that runs the commands the policy
	// allows without a person (Options.Sandbox set); commands a person
	// approved run as User. Empty: every command runs as User. Make it an
	// account without sudo, in the adm and systemd-journal groups
	// (docs/SECURITY.md), so a classifier mistake cannot change the host.
	ReadOnlyUser string `yaml:"readonly_user"`
	// ConnectTimeout bounds the TCP connect plus SSH handshake of one host
	// (default 10s).
	ConnectTimeout time.Duration `yaml:"connect_timeout"`
	// DialConcurrency is how many hosts may be connecting at once across
	// the pool (default 64), so a cold fan-out over a big fleet neither
	// exhausts file descriptors nor trips servers' MaxStartups.
	DialConcurrency int `yaml:"dial_concurrency"`
	// MaxSessions is how many commands run at once over one connection
	// (default 10, OpenSSH's MaxSessions); more wait for a free session.
	MaxSessions int `yaml:"max_sessions"`
	// KeepAlive is how often an open connection is health-checked
	// (default 30s); a connection that fails the check is dropped and
	// redialled by the next command.
	KeepAlive time.Duration `yaml:"keepalive_interval"`
	// IdleTimeout closes a connection no command used for that long
	// (default 10m).
	IdleTimeout time.Duration `yaml:"idle_timeout"`
}

// HostConfig is one remote host of the inventory.
type HostConfig struct {
	// Name is what targets call the host; unique, "local" is built in.
	Name string `yaml:"name"`
	// Address is host:port (":22" is added when the port is missing).
	Address string `yaml:"address"`
	// User overrides ssh.user for this host.
	User string `yaml:"user"`
	// ReadOnlyUser overrides ssh.readonly_user for this host.
	ReadOnlyUser string `yaml:"readonly_user"`
	// Groups lets targets name several hosts at once: group:NAME.
	Groups []string `yaml:"groups"`
	// RemoteSandbox overrides policy.remote_sandbox for this host:
	// required (commands the policy allows wait for approval when the
	// host has neither bubblewrap nor a readonly_user) or best_effort
	// (they run unconfined).
	RemoteSandbox string `yaml:"remote_sandbox"`
}

// ExecConfig holds the defaults of every command run on a host.
type ExecConfig struct {
	// Timeout is the deadline of a command that sets none (default 60s).
	Timeout time.Duration `yaml:"timeout"`
	// OutputLimit is how many bytes of a command's output are kept, half
	// from its start and half from its end (default 1 MiB).
	OutputLimit int `yaml:"output_limit"`
	// Concurrency is how many hosts a fan-out runs on at once (default 64).
	Concurrency int `yaml:"concurrency"`
	// MaxPerHost is how many commands may run at once on one host, from
	// every source together (chat, agent, jobs, checks; default 10); more
	// wait for one to end.
	MaxPerHost int `yaml:"max_per_host"`
}

// LocalHost is the name of the built-in host that is the bot's own machine.
const LocalHost = "local"

// Defaults used when the config leaves a value empty.
const (
	DefaultTimeout         = 60 * time.Second
	DefaultOutputLimit     = 1 << 20
	DefaultConcurrency     = 64
	DefaultMaxPerHost      = 10
	DefaultConnectTimeout  = 10 * time.Second
	DefaultDialConcurrency = 64
	DefaultMaxSessions     = 10
	DefaultKeepAlive       = 30 * time.Second
	DefaultIdleTimeout     = 10 * time.Minute
)

// WithDefaults fills what the file left empty.
func (c Config) WithDefaults() Config {
	c.SSH = c.SSH.WithDefaults()
	c.Exec = c.Exec.WithDefaults()
	return c
}

// WithDefaults fills what the file left empty.
func (c SSHConfig) WithDefaults() SSHConfig {
	setDefault(&c.ConnectTimeout, DefaultConnectTimeout)
	setDefault(&c.DialConcurrency, DefaultDialConcurrency)
	setDefault(&c.MaxSessions, DefaultMaxSessions)
	setDefault(&c.KeepAlive, DefaultKeepAlive)
	setDefault(&c.IdleTimeout, DefaultIdleTimeout)
	return c
}

// WithDefaults fills what the file left empty.
func (c ExecConfig) WithDefaults() ExecConfig {
	setDefault(&c.Timeout, DefaultTimeout)
	setDefault(&c.OutputLimit, DefaultOutputLimit)
	setDefault(&c.Concurrency, DefaultConcurrency)
	setDefault(&c.MaxPerHost, DefaultMaxPerHost)
	return c
}

func setDefault[T int | time.Duration](v *T, def T) {
	if *v == 0 {
		*v = def
	}
}

// Validate reports every problem of the inventory at once.
func (c Config) Validate() error {
	var errs []error
	seen := map[string]bool{LocalHost: true}
	for i, h := range c.Hosts {
		key := fmt.Sprintf("hosts[%d]", i)
		switch {
		case h.Name == "":
			errs = append(errs, fieldError{key + ".name", "is required: give the host a name to target it by"})
		case seen[h.Name]:
			errs = append(errs, fieldError{key + ".name", fmt.Sprintf("%q is used twice (\"local\" is built in): host names must be unique", h.Name)})
		case !validName(h.Name):
			errs = append(errs, fieldError{key + ".name", fmt.Sprintf("%q: use letters, digits, '.', '_' and '-' (commas and colons separate targets)", h.Name)})
		}
		seen[h.Name] = true
		if h.Address == "" {
			errs = append(errs, fieldError{key + ".address", "is required: host:port, e.g. 10.0.0.5:22"})
		} else if _, _, err := net.SplitHostPort(withPort(h.Address)); err != nil {
			errs = append(errs, fieldError{key + ".address", fmt.Sprintf("%q is not host:port, e.g. 10.0.0.5:22", h.Address)})
		}
		if strings.ContainsAny(h.ReadOnlyUser, " \t@:/") {
			errs = append(errs, fieldError{key + ".readonly_user", fmt.Sprintf("%q is not a user name", h.ReadOnlyUser)})
		}
		if !validRemoteSandboxMode(h.RemoteSandbox) {
			errs = append(errs, fieldError{key + ".remote_sandbox", fmt.Sprintf("%q is not a remote_sandbox mode: use required (commands the policy allows wait for approval on a host without a sandbox) or best_effort (they run unconfined there)", h.RemoteSandbox)})
		}
		for j, g := range h.Groups {
			if !validName(g) {
				errs = append(errs, fieldError{fmt.Sprintf("%s.groups[%d]", key, j), fmt.Sprintf("%q: use letters, digits, '.', '_' and '-'", g)})
			}
		}
	}
	if strings.ContainsAny(c.SSH.ReadOnlyUser, " \t@:/") {
		errs = append(errs, fieldError{"ssh.readonly_user", fmt.Sprintf("%q is not a user name", c.SSH.ReadOnlyUser)})
	}
	if len(c.Hosts) > 0 && c.SSH.KnownHosts == "" {
		errs = append(errs, fieldError{"ssh.known_hosts", "is required when SSH hosts are configured: the OpenSSH known_hosts file that verifies their keys"})
	}
	errs = append(errs, c.validateNumbers()...)
	return errors.Join(errs...)
}

// validateNumbers refuses negative limits and durations; zero means default.
func (c Config) validateNumbers() []error {
	var errs []error
	durations := []struct {
		key string
		v   time.Duration
	}{
		{"ssh.connect_timeout", c.SSH.ConnectTimeout}, {"ssh.keepalive_interval", c.SSH.KeepAlive},
		{"ssh.idle_timeout", c.SSH.IdleTimeout}, {"exec.timeout", c.Exec.Timeout},
	}
	for _, d := range durations {
		if d.v < 0 {
			errs = append(errs, fieldError{d.key, "must be a positive duration, e.g. 30s"})
		}
	}
	counts := []struct {
		key string
		v   int
	}{
		{"ssh.dial_concurrency", c.SSH.DialConcurrency}, {"ssh.max_sessions", c.SSH.MaxSessions},
		{"exec.output_limit", c.Exec.OutputLimit}, {"exec.concurrency", c.Exec.Concurrency},
		{"exec.max_per_host", c.Exec.MaxPerHost},
	}
	for _, n := range counts {
		if n.v < 0 {
			errs = append(errs, fieldError{n.key, "must be a positive number (0 or absent means the default)"})
		}
	}
	return errs
}

// validName says whether s can be a host or group name in a target list.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
		if !ok {
			return false
		}
	}
	return true
}

// withPort adds OpenSSH's default port to an address that has none.
func withPort(addr string) string {
	if _, _, err := net.SplitHostPort(addr); err == nil {
		return addr
	}
	return net.JoinHostPort(strings.Trim(addr, "[]"), "22")
}

// fieldError is a validation error about one config key; the config loader
// finds the key's line through Field.
type fieldError struct{ key, msg string }

func (e fieldError) Error() string { return e.key + ": " + e.msg }

// Field is the dotted path of the offending key, relative to this section.
func (e fieldError) Field() string { return e.key }
