package hosts

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Host is one machine commands can run on: an SSH host of the inventory,
// or the built-in local host (the bot's own machine).
type Host struct {
	// Name is the inventory name, e.g. "web-1", or LocalHost.
	Name string
	// Address is host:port; empty for the local host.
	Address string
	// User is the remote user; empty for the local host and when the
	// pool's default user applies.
	User string
	// ReadOnlyUser runs the host's unattended commands; empty when
	// ssh.readonly_user (or, without one, User) applies.
	ReadOnlyUser string
	// Groups are the inventory groups the host is in.
	Groups []string
	// RemoteSandbox is the host's own remote_sandbox (required or
	// best_effort); empty: the pool's (policy.remote_sandbox).
	RemoteSandbox string
}

// IsLocal reports whether h is the bot's own machine.
func (h Host) IsLocal() bool { return h.Name == LocalHost }

// localHost is the built-in host that is the bot's own machine.
var localHost = Host{Name: LocalHost}

// Inventory resolves targets to hosts. It is read-only after NewInventory
// and safe for concurrent use.
type Inventory struct {
	hosts  []Host // inventory order, local first
	byName map[string]Host
	groups map[string][]Host
}

// NewInventory builds the inventory of cfg, which must be valid.
func NewInventory(cfg Config) (*Inventory, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("hosts: %w", err)
	}
	inv := &Inventory{byName: map[string]Host{LocalHost: localHost}, groups: map[string][]Host{}}
	inv.hosts = append(inv.hosts, localHost)
	for _, hc := range cfg.Hosts {
		h := Host{Name: hc.Name, Address: withPort(hc.Address), User: hc.User, ReadOnlyUser: hc.ReadOnlyUser, Groups: slices.Clone(hc.Groups),
			RemoteSandbox: hc.RemoteSandbox}
		inv.hosts = append(inv.hosts, h)
		inv.byName[h.Name] = h
		for _, g := range h.Groups {
			inv.groups[g] = append(inv.groups[g], h)
		}
	}
	return inv, nil
}

// Hosts returns every host, local first, then in config order.
func (inv *Inventory) Hosts() []Host { return slices.Clone(inv.hosts) }

// Lookup finds a host by name.
func (inv *Inventory) Lookup(name string) (Host, bool) {
	h, ok := inv.byName[name]
	return h, ok
}

// Groups returns the group names, sorted.
func (inv *Inventory) Groups() []string {
	names := make([]string, 0, len(inv.groups))
	for g := range inv.groups {
		names = append(names, g)
	}
	sort.Strings(names)
	return names
}

// Resolve turns a target into hosts. A target is NAME, group:NAME, or a
// comma list of those; each host appears once, in the order first named
// (a group's hosts in config order). An unknown name is an error that
// lists what exists.
func (inv *Inventory) Resolve(target string) ([]Host, error) {
	var out []Host
	seen := map[string]bool{}
	for part := range strings.SplitSeq(target, ",") {
		part = strings.TrimSpace(part)
		hosts, err := inv.resolveOne(part)
		if err != nil {
			return nil, err
		}
		for _, h := range hosts {
			if !seen[h.Name] {
				seen[h.Name] = true
				out = append(out, h)
			}
		}
	}
	return out, nil
}

func (inv *Inventory) resolveOne(part string) ([]Host, error) {
	if part == "" {
		return nil, fmt.Errorf("empty target: give a host name, group:NAME, or a comma list of those")
	}
	if g, ok := strings.CutPrefix(part, "group:"); ok {
		if hosts, ok := inv.groups[g]; ok {
			return hosts, nil
		}
		return nil, &UnknownTargetError{fmt.Sprintf("unknown group %q: the groups are %s", g, listOrNone(inv.Groups()))}
	}
	if h, ok := inv.byName[part]; ok {
		return []Host{h}, nil
	}
	names := make([]string, len(inv.hosts))
	for i, h := range inv.hosts {
		names[i] = h.Name
	}
	return nil, &UnknownTargetError{fmt.Sprintf("unknown host %q: the hosts are %s; groups: %s", part, strings.Join(names, ", "), listOrNone(inv.Groups()))}
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// UnknownTargetError is a target naming no host or group of the
// inventory. It names the ones there are but no command to list them:
// the CLI and the chat each type that command their own way, and add it.
type UnknownTargetError struct{ msg string }

func (e *UnknownTargetError) Error() string { return e.msg }
