package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/opsbot/opsbot/agent/mcp"
)

// mcpPrompt is the system prompt's part on MCP tool servers: each server,
// which of its tools run at once, wait for approval or are refused, and
// what happens to the rest; "" when none is configured. It says what the
// config decides, as the code decides it.
func mcpPrompt(c mcp.Config) string {
	if len(c.Servers) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("MCP tool servers: their tools are named SERVER__TOOL. opsbot's config decides each call, never the server: ")
	b.WriteString("a call that waits for approval waits for a person other than the requester, bound to its exact arguments.\n")
	for _, name := range c.Names() {
		s := c.Servers[name].WithDefaults()
		by := map[mcp.Decision][]string{}
		for _, tool := range slices.Sorted(maps.Keys(s.Tools)) {
			by[s.Tools[tool]] = append(by[s.Tools[tool]], tool)
		}
		fmt.Fprintf(&b, "- %s:", name)
		for _, d := range []mcp.Decision{mcp.Allow, mcp.Approve, mcp.Deny} {
			if len(by[d]) > 0 {
				fmt.Fprintf(&b, " %s: %s;", mcpWords(d), strings.Join(by[d], ", "))
			}
		}
		fmt.Fprintf(&b, " any other tool: %s.\n", mcpWords(s.Default))
	}
	b.WriteString("A tool a server adds after opsbot connected waits for approval until the config names it. " +
		"A server that is down answers \"unavailable\": say so and go on without it.\n")
	return b.String()
}

func mcpWords(d mcp.Decision) string {
	switch d {
	case mcp.Allow:
		return "runs at once"
	case mcp.Deny:
		return "refused (not offered)"
	}
	return "waits for approval"
}
