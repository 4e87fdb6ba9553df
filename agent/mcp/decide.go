package mcp

import "fmt"

// Decision is what opsbot does with a call of a tool: run it, ask people,
// or refuse it. The config decides, never the server.
type Decision string

// The decisions, from the most permissive.
const (
	Allow   Decision = "allow"
	Approve Decision = "approve"
	Deny    Decision = "deny"
)

func (d Decision) valid() bool { return d == Allow || d == Approve || d == Deny }

// rank orders the decisions by strictness; one not known is a deny.
func (d Decision) rank() int {
	switch d {
	case Allow:
		return 0
	case Approve:
		return 1
	}
	return 2
}

// Verdict is a decision with its reason, in words for people and the
// model ("mcp.servers.grafana.tools.delete_dashboard is deny").
type Verdict struct {
	Decision Decision
	Reason   string
}

// Decide is the config's decision on a tool of a server. A tool the
// config names gets its own; any other gets the server's default, but a
// late one (listed after the server's first listing) is approve at most
// until the config names it. A server not configured is a deny.
func (c Config) Decide(server, tool string, late bool) Verdict {
	s, ok := c.Servers[server]
	if !ok {
		return Verdict{Deny, fmt.Sprintf("no MCP server %q in mcp.servers", server)}
	}
	s = s.WithDefaults()
	if d, ok := s.Tools[tool]; ok {
		return Verdict{d, fmt.Sprintf("mcp.servers.%s.tools.%s is %s", server, tool, d)}
	}
	if late && s.Default.rank() < Approve.rank() {
		return Verdict{Approve, fmt.Sprintf("%s appeared on %s after opsbot connected, and mcp.servers.%s.tools does not name it: "+
			"it needs approval until the config does", tool, server, server)}
	}
	return Verdict{s.Default, fmt.Sprintf("mcp.servers.%s.default is %s (mcp.servers.%s.tools does not name %s)", server, s.Default, server, tool)}
}
