package policy

import (
	"fmt"
	"slices"
	"strings"
)

// Action is what the policy decides for a command.
type Action int

// The actions, ordered so that the stricter one is larger: when several
// parts of a command disagree, the largest wins (deny beats approve beats
// allow).
const (
	Allow Action = iota
	Approve
	Deny
)

// String is the action's word: allow, approve or deny.
func (a Action) String() string {
	switch a {
	case Allow:
		return "allow"
	case Approve:
		return "approve"
	case Deny:
		return "deny"
	}
	return fmt.Sprintf("action(%d)", int(a))
}

// ParseAction reads "allow", "approve" or "deny".
func ParseAction(s string) (Action, error) {
	switch s {
	case "allow":
		return Allow, nil
	case "approve":
		return Approve, nil
	case "deny":
		return Deny, nil
	}
	return Approve, fmt.Errorf("policy: %q is not an action (allow, approve or deny)", s)
}

// Target is where a command would run.
type Target struct {
	Host   string
	Groups []string
}

// Decision is the policy's verdict on a whole command line.
type Decision struct {
	Action Action
	// Reasons explain the action, one line each, most severe first.
	Reasons []string
	// Commands are the simple commands found in the syntax tree, in
	// source order, wrappers and their inner commands each listed.
	Commands []Command
}

// Command is one simple command found in a command line.
type Command struct {
	// Argv is the command's words after quote removal; a word the shell
	// would compute at run time is shown as written.
	Argv []string
	// Program is the resolved program name; empty when it is computed at
	// run time.
	Program string
	// Via lists the wrappers the command was found inside, outermost
	// first, e.g. ["sudo", "sh -c"].
	Via     []string
	Action  Action
	Reasons []string
	// words are Argv as the classifier read them, for tests comparing
	// two parses.
	words []arg
}

// String renders the command for --explain.
func (c Command) String() string {
	var b strings.Builder
	for _, v := range c.Via {
		b.WriteString(v + " → ")
	}
	b.WriteString(strings.Join(c.Argv, " "))
	fmt.Fprintf(&b, "  [%s", c.Action)
	if len(c.Reasons) > 0 {
		b.WriteString(": " + strings.Join(c.Reasons, "; "))
	}
	b.WriteString("]")
	return b.String()
}

// Policy classifies commands. It is immutable and safe for concurrent use.
type Policy struct {
	def     Action
	allow   map[string]bool // extra programs: any arguments are read-only
	removed map[string]bool
	rules   []rule
	secrets secretList
	egress  egressList
	// unsandboxed names the host whose allowed commands need approval,
	// for unsandboxedWhy (see WithoutSandbox).
	unsandboxed, unsandboxedWhy string
	// bash confirms how bash reads what the policy would allow.
	bash *bashReader
}

// NewPolicy builds a policy from its config section.
func NewPolicy(cfg PolicyConfig) (*Policy, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	p := &Policy{def: Approve, allow: map[string]bool{}, removed: map[string]bool{}, bash: newBashReader()}
	if cfg.Default != "" {
		p.def, _ = ParseAction(cfg.Default)
	}
	for _, n := range cfg.Allow {
		p.allow[n] = true
	}
	for _, n := range cfg.Remove {
		p.removed[n] = true
	}
	for _, r := range cfg.Rules {
		p.rules = append(p.rules, compileRule(r))
	}
	p.secrets = compileSecrets(slices.Concat(DefaultSecretPaths, cfg.SecretPaths, cfg.OwnSecrets))
	p.egress = newEgressList(cfg.EgressAllow, cfg.KnownHosts, cfg.KnownServices)
	return p, nil
}

// Check classifies a command line for a target. The decision is made by
// code from the parsed command alone; nothing else is an input.
func (p *Policy) Check(t Target, command string) Decision {
	return p.check(t, command, true)
}

// check is Check; confirm asks bash to confirm an allow (off only for the
// parser differential test, which compares with bash itself).
func (p *Policy) check(t Target, command string, confirm bool) Decision {
	w := &walker{policy: p, target: t}
	w.checkText(command)
	if w.verdict.action < Deny && len(command) <= maxCommandBytes {
		w.script(command, scope{})
	}
	if w.verdict.action == Allow && confirm {
		p.confirmWithBash(t, w)
	}
	return p.sandboxFallback(t, w.decision())
}

// verdict accumulates an action and its reasons; the strictest action
// wins and only its reasons (and those of equal rank) are kept first.
type verdict struct {
	action  Action
	reasons []reason
}

type reason struct {
	action Action
	text   string
}

func (v *verdict) add(a Action, text string) {
	v.action = max(v.action, a)
	for _, r := range v.reasons {
		if r.text == text {
			return
		}
	}
	v.reasons = append(v.reasons, reason{a, text})
}

// lines orders the reasons most severe first, keeping source order within
// a rank.
func (v *verdict) lines() []string {
	rs := slices.Clone(v.reasons)
	slices.SortStableFunc(rs, func(a, b reason) int { return int(b.action) - int(a.action) })
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		if r.action == v.action || r.action > Allow {
			out = append(out, r.text)
		}
	}
	return out
}

// SecretPaths are the entries of the policy's secret list (the defaults,
// policy.secret_paths and opsbot's own places), for the sandboxes that
// mask them (hosts.Confinement.Hidden).
func (p *Policy) SecretPaths() []string {
	out := make([]string, 0, len(p.secrets.entries))
	for _, e := range p.secrets.entries {
		if !slices.Contains(out, e.raw) {
			out = append(out, e.raw)
		}
	}
	return out
}
