package agent

import (
	"fmt"
	"strings"
	"time"
)

// Environment is what the system prompt tells the model about where it
// works.
type Environment struct {
	// Hosts are the hosts this conversation may use, with their groups.
	Hosts []HostInfo
	// Policy summarizes the command policy in a few lines.
	Policy string
	Skills []Skill
	Now    func() time.Time
}

// HostInfo is one host as the model sees it.
type HostInfo struct {
	Name   string
	Groups []string
}

const basePrompt = `You are opsbot, an operations assistant in a team chat. You investigate problems on the
team's hosts with tools and answer in the thread, concisely, with the evidence (commands and the
numbers they printed). Prefer read-only diagnostics. Commands that could change or break
something wait for a person to approve them and may be denied; a denial is final for that
command — explain what you would have done instead of retrying it in another form. Never
try to get around the command policy. Use start_job for anything that takes minutes.`

// SystemPrompt composes the system prompt for a session.
func (e Environment) SystemPrompt(sess SessionInfo) string {
	var b strings.Builder
	b.WriteString(basePrompt)
	now := time.Now
	if e.Now != nil {
		now = e.Now
	}
	fmt.Fprintf(&b, "\n\n# Environment\nTime: %s\n", now().UTC().Format(time.RFC3339))
	if sess.Cwd != "" {
		fmt.Fprintf(&b, "Working directory on host local: %s\n", sess.Cwd)
	}
	b.WriteString("Hosts you may target (target a group as group:NAME):\n")
	for _, h := range e.Hosts {
		fmt.Fprintf(&b, "- %s", h.Name)
		if len(h.Groups) > 0 {
			fmt.Fprintf(&b, " (groups: %s)", strings.Join(h.Groups, ", "))
		}
		b.WriteString("\n")
	}
	if e.Policy != "" {
		fmt.Fprintf(&b, "\n# Command policy\n%s\n", e.Policy)
	}
	if len(e.Skills) > 0 {
		fmt.Fprintf(&b, "\n# Skills (load one with load_skill before using it)\n%s", SkillIndex(e.Skills))
	}
	return b.String()
}
