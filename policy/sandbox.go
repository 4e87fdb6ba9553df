package policy

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// The values of policy.sandbox: what a command the policy allows without
// approval does on the bot's host when the kernel cannot sandbox it.
const (
	// SandboxRequired (the default) makes such a command need approval.
	SandboxRequired = "required"
	// SandboxBestEffort runs it unconfined, with a warning at start.
	SandboxBestEffort = "best_effort"
)

// SandboxMode is c.Sandbox with its default.
func (c PolicyConfig) SandboxMode() string {
	if c.Sandbox == "" {
		return SandboxRequired
	}
	return c.Sandbox
}

func (c PolicyConfig) validateSandbox() error {
	switch c.Sandbox {
	case "", SandboxRequired, SandboxBestEffort:
		return nil
	}
	return fieldError{"sandbox", fmt.Sprintf("%q is not a sandbox mode: use required (commands that cannot be sandboxed wait for approval) or best_effort (they run without the sandbox)", c.Sandbox)}
}

// RemoteSandboxMode is c.RemoteSandbox with its default: required.
func (c PolicyConfig) RemoteSandboxMode() string {
	if c.RemoteSandbox == "" {
		return SandboxRequired
	}
	return c.RemoteSandbox
}

func (c PolicyConfig) validateRemoteSandbox() error {
	switch c.RemoteSandbox {
	case "", SandboxRequired, SandboxBestEffort:
		return nil
	}
	return fieldError{"remote_sandbox", fmt.Sprintf("%q is not a sandbox mode: use required (commands the policy allows wait for approval on an SSH host with neither bubblewrap nor a readonly_user) or best_effort (they run there unconfined)", c.RemoteSandbox)}
}

// WithoutSandbox is p for a deployment where commands on host cannot run in
// the sandbox that holds what runs without a person (the bot's own host on
// a kernel without Landlock, under policy.sandbox: required): there, what
// p would allow needs approval instead, for the reason why. p itself is
// unchanged.
func (p *Policy) WithoutSandbox(host, why string) *Policy {
	q := *p
	q.unsandboxed = host
	q.unsandboxedWhy = why
	return &q
}

// sandboxFallback turns an allow on the unsandboxed host into approve.
func (p *Policy) sandboxFallback(t Target, d Decision) Decision {
	if p.unsandboxed == "" || t.Host != p.unsandboxed || d.Action != Allow {
		return d
	}
	d.Action = Approve
	d.Reasons = slices.Concat([]string{"no sandbox on the bot's host, so nothing runs there without approval (" + p.unsandboxedWhy + ")"}, d.Reasons)
	return d
}

// ConnectPorts are the TCP ports of the network destinations an allowed
// command names, for its sandbox (which allows connects by port only):
// those of curl's http and https URLs, and 53 for the DNS clients. None
// for a command that is not allowed, or whose destinations are not plain
// in its words: the sandbox then lets it connect nowhere.
func (d Decision) ConnectPorts() []uint16 {
	if d.Action != Allow {
		return nil
	}
	var ports []uint16
	for _, c := range d.Commands {
		switch c.Program {
		case "curl":
			for _, w := range c.Argv[min(1, len(c.Argv)):] {
				if p, ok := urlPort(strings.TrimPrefix(w, "--url=")); ok {
					ports = append(ports, p)
				}
			}
		case "dig", "host", "nslookup":
			ports = append(ports, 53) // TCP when an answer is too big for UDP
		}
	}
	slices.Sort(ports)
	return slices.Compact(ports)
}

// urlPort is the port a curl URL operand connects to: its own, else 80 for
// http (curl's guess for a URL without a scheme) and 443 for https.
func urlPort(w string) (uint16, bool) {
	if w == "" || strings.HasPrefix(w, "-") {
		return 0, false
	}
	if !strings.Contains(w, "://") {
		w = "http://" + w
	}
	u, err := url.Parse(w)
	if err != nil || u.Host == "" {
		return 0, false
	}
	defaults := map[string]uint16{"http": 80, "https": 443}
	def, ok := defaults[strings.ToLower(u.Scheme)]
	if !ok {
		return 0, false
	}
	if u.Port() == "" {
		return def, true
	}
	p, err := strconv.ParseUint(u.Port(), 10, 16)
	return uint16(p), err == nil && p > 0
}
