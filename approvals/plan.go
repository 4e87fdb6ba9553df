package approvals

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/opsbot/opsbot/policy"
)

// PlanStep is one command of a plan: where, what, and optionally why, how
// to check it worked and how to undo it.
type PlanStep struct {
	Target   string `json:"target"`
	Command  string `json:"command"`
	Why      string `json:"why,omitempty"`
	Verify   string `json:"verify,omitempty"`
	Rollback string `json:"rollback,omitempty"`
}

// Plan is a goal and the commands that reach it, approved once as a
// whole and run by opsbot in order.
type Plan struct {
	Goal  string     `json:"goal"`
	Steps []PlanStep `json:"steps"`
}

// planPrefix starts the canonical text of every plan, so that a plan's
// approval can never be taken for a command's.
const planPrefix = "opsbot plan v1\n"

// Canonical is the plan's one encoding: what its approval binds (as the
// Request's Command, so the Request's hash covers every byte of the goal
// and of every step's target, command, why, verify and rollback).
func (p Plan) Canonical() string {
	b, _ := json.Marshal(p) // strings only: cannot fail
	return planPrefix + string(b)
}

// ErrNotPlan is ParsePlan's error for text that is no plan's canonical
// encoding.
var ErrNotPlan = errors.New("approvals: not a plan")

// ParsePlan reads a plan back from its canonical text; it accepts only
// the exact bytes Canonical writes.
func ParsePlan(text string) (Plan, error) {
	body, ok := strings.CutPrefix(text, planPrefix)
	if !ok {
		return Plan{}, ErrNotPlan
	}
	var p Plan
	if err := json.Unmarshal([]byte(body), &p); err != nil || p.Canonical() != text {
		return Plan{}, ErrNotPlan
	}
	return p, nil
}

// IsPlan reports whether an approval's command is a plan's canonical text.
func IsPlan(command string) bool { return strings.HasPrefix(command, planPrefix) }

// Shown is an approval's command as people read it in a listing or a
// notice: a command itself, a plan as "plan: <goal> (N steps on host1,
// host2)" — never its canonical text, which is for the hash.
func Shown(command string) string {
	if !IsPlan(command) {
		return command
	}
	p, err := ParsePlan(command)
	if err != nil {
		return "plan (unreadable)"
	}
	var targets []string
	for _, s := range p.Steps {
		if !slices.Contains(targets, s.Target) {
			targets = append(targets, s.Target)
		}
	}
	steps := "steps"
	if len(p.Steps) == 1 {
		steps = "step"
	}
	return fmt.Sprintf("plan: %s (%d %s on %s)", p.Goal, len(p.Steps), steps, strings.Join(targets, ", "))
}

// StepVerdict is the policy's decision on one step, on the hosts its
// target resolved to, and on its verify command when it has one (Verify
// is the zero decision, allow, when it has none).
type StepVerdict struct {
	Hosts    []string
	Decision HostDecision
	Verify   HostDecision
}

// Needs is the strictest action over verdicts, verify commands included:
// allow when no step needs a person.
func Needs(vs []StepVerdict) policy.Action {
	worst := policy.Allow
	for _, v := range vs {
		worst = max(worst, v.Decision.Action, v.Verify.Action)
	}
	return worst
}

// PlanHosts is every host the verdicts name, sorted and once each: the
// hosts a plan's approval binds, for the approver rules per host.
func PlanHosts(vs []StepVerdict) []string {
	var hs []string
	for _, v := range vs {
		for _, h := range v.Hosts {
			if !slices.Contains(hs, h) {
				hs = append(hs, h)
			}
		}
	}
	slices.Sort(hs)
	return hs
}

// ClassifyPlan decides every step of p before anyone is asked, through
// the same policy path as a command (Decide): a step whose target does not
// resolve, or whose command or verify command the policy denies, refuses
// the whole plan, in words naming the step. A plan with no step, or a
// step with no command, is refused too. (A rollback is classified when it
// is proposed as a plan of its own.)
func (g *Guard) ClassifyPlan(p Plan) ([]StepVerdict, error) {
	if strings.TrimSpace(p.Goal) == "" || len(p.Steps) == 0 {
		return nil, &Refusal{Reason: "a plan needs a goal and at least one step"}
	}
	vs := make([]StepVerdict, len(p.Steps))
	for i, s := range p.Steps {
		if strings.TrimSpace(s.Command) == "" || strings.TrimSpace(s.Target) == "" {
			return nil, &Refusal{Reason: fmt.Sprintf("step %d has no target or no command", i+1)}
		}
		hs, err := g.Exec.Resolve(s.Target)
		if err != nil {
			return nil, &Refusal{Reason: fmt.Sprintf("step %d: target %q is not a known host or group (%v)", i+1, s.Target, err)}
		}
		d := g.Decide(hs, s.Command)
		if d.Action == policy.Deny {
			g.refused(policy.Deny, "refused")
			return nil, &Refusal{Reason: fmt.Sprintf("step %d (`%s` on %s) is denied by policy: %s", i+1, s.Command, s.Target, strings.Join(d.Reasons, "; "))}
		}
		vs[i] = StepVerdict{Hosts: hs, Decision: d}
		if s.Verify == "" {
			continue
		}
		if vs[i].Verify = g.Decide(hs, s.Verify); vs[i].Verify.Action == policy.Deny {
			g.refused(policy.Deny, "refused")
			return nil, &Refusal{Reason: fmt.Sprintf("step %d's verify (`%s` on %s) is denied by policy: %s", i+1, s.Verify, s.Target, strings.Join(vs[i].Verify.Reasons, "; "))}
		}
	}
	return vs, nil
}
