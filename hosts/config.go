package hosts

import (
	"errors"
	"fmt"
)

// Config is the inventory section of the config file: the top-level `ssh`
// and `hosts` keys.
type Config struct {
	SSH   SSHConfig    `yaml:"ssh"`
	Hosts []HostConfig `yaml:"hosts"`
}

// SSHConfig holds what every SSH host shares.
type SSHConfig struct {
	// KnownHosts is the OpenSSH known_hosts file used to verify host keys;
	// required as soon as one SSH host is configured.
	KnownHosts string `yaml:"known_hosts"`
	// IdentityFiles are private keys to offer; the ssh-agent at
	// SSH_AUTH_SOCK is used as well when it is set.
	IdentityFiles []string `yaml:"identity_files"`
	// User is the default remote user.
	User string `yaml:"user"`
}

// HostConfig is one remote host of the inventory.
type HostConfig struct {
	Name    string   `yaml:"name"`
	Address string   `yaml:"address"`
	User    string   `yaml:"user"`
	Groups  []string `yaml:"groups"`
}

// LocalHost is the name of the built-in host that is the bot's own machine.
const LocalHost = "local"

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
		}
		seen[h.Name] = true
		if h.Address == "" {
			errs = append(errs, fieldError{key + ".address", "is required: host:port, e.g. 10.0.0.5:22"})
		}
	}
	if len(c.Hosts) > 0 && c.SSH.KnownHosts == "" {
		errs = append(errs, fieldError{"ssh.known_hosts", "is required when SSH hosts are configured: the OpenSSH known_hosts file that verifies their keys"})
	}
	return errors.Join(errs...)
}

// fieldError is a validation error about one config key; the config loader
// finds the key's line through Field.
type fieldError struct{ key, msg string }

func (e fieldError) Error() string { return e.key + ": " + e.msg }

// Field is the dotted path of the offending key, relative to this section.
func (e fieldError) Field() string { return e.key }
