package policy

import (
	"errors"
	"fmt"
	"net/netip"
	"path"
	"strings"
)

// PolicyConfig is the `policy` section of the config file.
type PolicyConfig struct {
	// Default is the action for a command no rule and no allowlist entry
	// covers: allow, approve or deny. Empty means approve.
	Default string `yaml:"default"`
	// Allow adds programs to the built-in read-only allowlist: every
	// invocation of them, with any arguments, is read-only. Use a rule to
	// allow a program only with some arguments.
	Allow []string `yaml:"allow"`
	// Remove takes programs out of the built-in allowlist.
	Remove []string `yaml:"remove"`
	// Rules match a program and its arguments on the parsed argv, per host
	// or host group. When several rules match one command, deny beats
	// approve beats allow.
	Rules []RuleConfig `yaml:"rules"`
	// SecretPaths adds to DefaultSecretPaths: reading any of them needs
	// approval unless a rule allows that read. "/path" is the path and
	// everything under it, "~/path" that path in any home directory, a
	// bare name a file of that name anywhere; "*", "?" and [...] match.
	SecretPaths []string `yaml:"secret_paths"`
	// EgressAllow lists where network clients (curl, dig, ssh, nc, …) may
	// connect without a person, besides the inventory: a name (and the
	// names below it), *.domain, an address or a CIDR, on any port; or
	// host:port, that port only. Loopback is known only on the ports
	// listed here ("127.0.0.1:9100", "localhost:5432", "[::1]:6379") and
	// those of KnownServices: a local port may forward anywhere.
	EgressAllow []string `yaml:"egress_allow"`
	// OwnSecrets are opsbot's own files (its config, database and data
	// directory), added by the composition root; absolute paths or bare
	// file names, as in SecretPaths.
	OwnSecrets []string `yaml:"-"`
	// KnownHosts are the inventory's host names and addresses (host or
	// host:port), added by the composition root: each is a known
	// destination by itself (a name here does not cover the names below
	// it). An address on loopback is known only on its port, and on the
	// bot's host only; a loopback name or address without a port opens
	// nothing, as it would open every local port.
	KnownHosts []string `yaml:"-"`
	// KnownServices are the listen addresses (host:port) of opsbot's own
	// listeners, added by the composition root: known destinations for
	// commands on the bot's host only, on each loopback spelling the
	// listener binds (":8080" on 127.0.0.1, ::1 and localhost).
	KnownServices []string `yaml:"-"`
	// Sandbox is what a command allowed without approval does on the bot's
	// host when the kernel cannot sandbox it (no Landlock): "required"
	// (the default) makes it need approval, "best_effort" runs it without
	// the sandbox.
	Sandbox string `yaml:"sandbox"`
	// RemoteSandbox is what a command allowed without approval does on an
	// SSH host that has no sandbox for it (neither a working bubblewrap
	// nor a readonly_user): "required" (the default) makes it need
	// approval, "best_effort" runs it unconfined, with a warning. A host
	// of the inventory may set its own (hosts[].remote_sandbox). Health
	// checks run there either way.
	RemoteSandbox string `yaml:"remote_sandbox"`
}

// RuleConfig is one policy rule of the config file.
type RuleConfig struct {
	// Name labels the rule in reasons and audit; optional.
	Name string `yaml:"name"`
	// Hosts limits the rule to these host names; Groups to hosts in any of
	// these host groups. Both empty: every host.
	Hosts  []string `yaml:"hosts"`
	Groups []string `yaml:"groups"`
	// Program is the program name (its base name when it is run from a
	// system directory), or a glob on it such as "mkfs.*".
	Program string `yaml:"program"`
	// Args are glob patterns matched one to one against the arguments
	// after the program name; a pattern "**" matches any number of
	// arguments. Omitted: any arguments.
	Args []string `yaml:"args"`
	// Action is allow, approve or deny.
	Action string `yaml:"action"`
	// Reason is shown to approvers and in `opsbot policy check`.
	Reason string `yaml:"reason"`
}

// Validate reports every problem of the policy section at once.
func (c PolicyConfig) Validate() error {
	var errs []error
	if c.Default != "" {
		if _, err := ParseAction(c.Default); err != nil {
			errs = append(errs, fieldError{"default", fmt.Sprintf("%q is not an action: use allow, approve or deny", c.Default)})
		}
	}
	errs = append(errs, validatePrograms("allow", c.Allow, true)...)
	errs = append(errs, validatePrograms("remove", c.Remove, false)...)
	for i, r := range c.Rules {
		errs = append(errs, r.validate(fmt.Sprintf("rules[%d]", i))...)
	}
	errs = append(errs, validateSecretPaths(c.SecretPaths)...)
	errs = append(errs, validateEgress(c.EgressAllow)...)
	errs = append(errs, c.validateSandbox(), c.validateRemoteSandbox())
	return errors.Join(errs...)
}

func validateSecretPaths(list []string) []error {
	var errs []error
	for i, p := range list {
		k := fmt.Sprintf("secret_paths[%d]", i)
		switch {
		case strings.TrimSpace(p) == "" || strings.ContainsFunc(p, func(r rune) bool { return r < ' ' }):
			errs = append(errs, fieldError{k, fmt.Sprintf("%q is not a path: give /abs/path, ~/path in a home directory, or a file name", p)})
		case strings.HasPrefix(p, "~") && !strings.HasPrefix(p, "~/"):
			errs = append(errs, fieldError{k, fmt.Sprintf("%q: write ~/path (it matches in every home directory), not ~user/path", p)})
		case !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~/") && strings.Contains(p, "/"):
			errs = append(errs, fieldError{k, fmt.Sprintf("%q is relative: give an absolute path, ~/path, or a bare file name", p)})
		}
	}
	return errs
}

func validateEgress(list []string) []error {
	var errs []error
	for i, h := range list {
		k := fmt.Sprintf("egress_allow[%d]", i)
		if _, ok := splitEndpoint(h); ok {
			continue
		}
		n := normHost(strings.TrimPrefix(h, "*."))
		if _, err := netip.ParsePrefix(n); err == nil {
			continue
		}
		if _, err := netip.ParseAddr(n); err == nil {
			continue
		}
		if n == "" || !hostName.MatchString(n) {
			errs = append(errs, fieldError{k, fmt.Sprintf("%q is not a destination: give a host name, *.domain, an address, a CIDR such as 10.0.0.0/8, or host:port such as 127.0.0.1:9100", h)})
		}
	}
	return errs
}

func validatePrograms(key string, names []string, adding bool) []error {
	var errs []error
	for i, n := range names {
		k := fmt.Sprintf("%s[%d]", key, i)
		switch {
		case n == "" || strings.ContainsAny(n, " \t/"):
			errs = append(errs, fieldError{k, fmt.Sprintf("%q is not a program name: give a bare name such as pg_isready", n)})
		case adding && neverAllowlisted(n):
			errs = append(errs, fieldError{k, fmt.Sprintf("%q cannot be allowlisted: it runs code the policy cannot see (shells, interpreters, eval and wrappers are classified by what they run)", n)})
		}
	}
	return errs
}

func (r RuleConfig) validate(key string) []error {
	var errs []error
	if r.Program == "" {
		errs = append(errs, fieldError{key + ".program", "is required: the program name the rule matches, e.g. systemctl"})
	} else if _, err := path.Match(r.Program, ""); err != nil {
		errs = append(errs, fieldError{key + ".program", fmt.Sprintf("%q is not a valid glob", r.Program)})
	}
	if _, err := ParseAction(r.Action); err != nil {
		errs = append(errs, fieldError{key + ".action", fmt.Sprintf("%q is not an action: use allow, approve or deny", r.Action)})
	}
	for j, p := range r.Args {
		if p == "**" {
			continue
		}
		if _, err := path.Match(p, ""); err != nil || strings.Contains(p, "**") {
			errs = append(errs, fieldError{fmt.Sprintf("%s.args[%d]", key, j), fmt.Sprintf("%q is not a valid pattern: use globs (*, ?, [..]) within one argument, or ** alone for any number of arguments", p)})
		}
	}
	return errs
}

// fieldError is a validation error about one key of a section; the config
// loader finds the key's line through Field.
type fieldError struct{ key, msg string }

// Error is the key and what is wrong with it.
func (e fieldError) Error() string { return e.key + ": " + e.msg }

// Field is the dotted path of the offending key, relative to the section.
func (e fieldError) Field() string { return e.key }
