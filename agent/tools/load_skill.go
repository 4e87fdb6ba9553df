package tools

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/opsbot/opsbot/agent"
)

//go:embed load_skill.md
var loadSkillDescription string

// LoadSkill is `load_skill`.
type LoadSkill struct{ Skills []agent.Skill }

var _ agent.Tool = (*LoadSkill)(nil)

// Spec describes the tool.
func (*LoadSkill) Spec() agent.ToolSpec {
	return spec("load_skill", loadSkillDescription, `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)
}

// Call returns the skill's body.
func (t *LoadSkill) Call(_ context.Context, call agent.ToolCall) agent.ToolResult {
	var in struct {
		Name string `json:"name"`
	}
	if err := decodeInput(call, &in); err != nil {
		return agent.Errorf("%v", err)
	}
	s, ok := findSkill(t.Skills, in.Name)
	if !ok {
		return agent.Errorf("no skill %q; the skills are listed in the system prompt", in.Name)
	}
	return agent.ToolResult{Content: fmt.Sprintf("<skill name=%q dir=%q>\n%s\n</skill>", s.Name, s.Dir, s.Body), Summary: "loaded skill " + s.Name}
}

// findSkill is the skill named name.
func findSkill(skills []agent.Skill, name string) (agent.Skill, bool) {
	for _, s := range skills {
		if s.Name == name {
			return s, true
		}
	}
	return agent.Skill{}, false
}

// Concurrent is true: the tool only reads, and asks no one.
func (*LoadSkill) Concurrent(agent.ToolCall) bool { return true }
