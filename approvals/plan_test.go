package approvals

import (
	"errors"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/policy"
)

func threeSteps() Plan {
	return Plan{Goal: "restart web", Steps: []PlanStep{
		{Target: "local", Command: "systemctl stop nginx", Rollback: "systemctl start nginx"},
		{Target: "local", Command: "rm -f /var/cache/nginx/x"},
		{Target: "local", Command: "systemctl start nginx", Verify: "curl -s localhost"}}}
}

// A plan's approval binds every byte: each change to the goal, a step's
// target, command, why, verify or rollback, or the steps' order, is
// another hash, and the canonical text reads back to the same plan only.
func TestPlanCanonicalBindsEveryByte(t *testing.T) {
	t.Parallel()
	base := threeSteps()
	req := func(p Plan) Request {
		return Request{Host: "local", Command: p.Canonical(), Requester: Person{Platform: "web", ID: "alice"}}
	}
	changes := map[string]func(p *Plan){
		"goal":      func(p *Plan) { p.Goal += " " },
		"target":    func(p *Plan) { p.Steps[0].Target = "web-1" },
		"flag":      func(p *Plan) { p.Steps[1].Command = "rm -rf /var/cache/nginx/x" },
		"space":     func(p *Plan) { p.Steps[2].Command = "systemctl  start nginx" },
		"quote":     func(p *Plan) { p.Steps[2].Command = "systemctl start 'nginx'" },
		"why":       func(p *Plan) { p.Steps[0].Why = "why" },
		"verify":    func(p *Plan) { p.Steps[2].Verify = "" },
		"rollback":  func(p *Plan) { p.Steps[0].Rollback += ";" },
		"reordered": func(p *Plan) { p.Steps[0], p.Steps[2] = p.Steps[2], p.Steps[0] },
		"extra":     func(p *Plan) { p.Steps = append(p.Steps, PlanStep{Target: "local", Command: "true"}) },
		"dropped":   func(p *Plan) { p.Steps = p.Steps[:2] },
	}
	seen := map[string]string{req(base).Hash(): "base"}
	for name, change := range changes {
		p := threeSteps()
		change(&p)
		h := req(p).Hash()
		if other, ok := seen[h]; ok {
			t.Errorf("%s: the same hash as %s", name, other)
		}
		seen[h] = name
		if back, err := ParsePlan(p.Canonical()); err != nil || back.Canonical() != p.Canonical() {
			t.Errorf("%s: does not read back (%v)", name, err)
		}
	}
	if _, err := ParsePlan(base.Canonical() + " "); !errors.Is(err, ErrNotPlan) {
		t.Errorf("a canonical text with a byte added reads as a plan (%v)", err)
	}
	if !IsPlan(base.Canonical()) || IsPlan("systemctl stop nginx") {
		t.Error("IsPlan does not tell a plan from a command")
	}
}

// byCommand is a HostPolicy that denies commands naming "rm", allows
// "true", and asks for a person for the rest.
type byCommand struct{}

func (byCommand) Check(_, command string) HostDecision {
	switch {
	case strings.HasPrefix(command, "rm "):
		return HostDecision{Action: policy.Deny, Reasons: []string{"removes files"}}
	case command == "true":
		return HostDecision{Action: policy.Allow}
	}
	return HostDecision{Action: policy.Approve, Reasons: []string{"changes the host"}}
}

// onlyLocal resolves "local" and nothing else.
type onlyLocal struct{ hosts.Executor }

func (onlyLocal) Resolve(t string) ([]string, error) {
	if t != "local" {
		return nil, errors.New("no such host")
	}
	return []string{hosts.LocalHost}, nil
}

// Before any card, every step is classified on its target: a denied step
// or an unknown target refuses the whole plan, naming the step.
func TestClassifyPlanRefusesTheWholePlanForOneStep(t *testing.T) {
	t.Parallel()
	g := &Guard{Policy: byCommand{}, Exec: onlyLocal{}}
	_, err := g.ClassifyPlan(threeSteps())
	var r *Refusal
	if !errors.As(err, &r) || !strings.Contains(r.Reason, "step 2 (`rm -f /var/cache/nginx/x` on local) is denied by policy: removes files") {
		t.Errorf("a plan with a denied step 2: %v", err)
	}
	p := threeSteps()
	p.Steps[1] = PlanStep{Target: "web-9", Command: "true"}
	if _, err := g.ClassifyPlan(p); !errors.As(err, &r) || !strings.Contains(r.Reason, `step 2: target "web-9" is not a known host`) {
		t.Errorf("a plan with an unknown target: %v", err)
	}
	p.Steps[1] = PlanStep{Target: "local", Command: "true"}
	vs, err := g.ClassifyPlan(p)
	if err != nil || Needs(vs) != policy.Approve || vs[1].Decision.Action != policy.Allow || len(PlanHosts(vs)) != 1 {
		t.Errorf("an approvable plan: %v %+v", err, vs)
	}
	if _, err := g.ClassifyPlan(Plan{Goal: "nothing"}); !errors.As(err, &r) {
		t.Errorf("a plan without steps: %v", err)
	}
}
