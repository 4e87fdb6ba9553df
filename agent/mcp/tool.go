package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opsbot/opsbot/agent"
)

// tool is one MCP tool as the model sees it: SERVER__TOOL, with the
// server's schema.
type tool struct {
	servers *Servers
	srv     *server
	// mcpName is the tool's name on its server; name the model's.
	mcpName, name string
	def           *sdk.Tool // nil for a tool called by a name no listing has
}

var _ agent.Tool = (*tool)(nil)

// Separator joins a server's name and a tool's in the model's tool name.
const Separator = "__"

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// ToolName is the model's name of a server's tool: SERVER__TOOL, its
// characters those every model API accepts, at most 64 of them (a long
// name ends in a hash of the whole).
func ToolName(server, mcpName string) string {
	n := server + Separator + unsafeName.ReplaceAllString(mcpName, "_")
	if len(n) > 64 || n != server+Separator+mcpName {
		sum := sha256.Sum256([]byte(mcpName))
		n = n[:min(len(n), 55)] + "_" + hex.EncodeToString(sum[:4])
	}
	return n
}

// Tools are the tools offered to the model now: every listed tool of
// every server the config does not deny, a down server's included (they
// answer that it is unavailable).
func (s *Servers) Tools() []agent.Tool {
	var out []agent.Tool
	for _, name := range s.order {
		srv := s.byName[name]
		for _, t := range srv.snapshot().tools {
			if srv.verdict(s.cfg, t.Name).Decision != Deny {
				out = append(out, &tool{servers: s, srv: srv, mcpName: t.Name, name: ToolName(name, t.Name), def: t})
			}
		}
	}
	return out
}

// Tool finds a tool by the model's name, a denied one too (its calls are
// refused, and say why).
func (s *Servers) Tool(name string) (agent.Tool, bool) {
	server, _, ok := strings.Cut(name, Separator)
	srv := s.byName[server]
	if !ok || srv == nil {
		return nil, false
	}
	for _, t := range srv.snapshot().tools {
		if ToolName(server, t.Name) == name {
			return &tool{servers: s, srv: srv, mcpName: t.Name, name: name, def: t}, true
		}
	}
	return nil, false
}

// Spec is the server's tool for the model: its description, what opsbot
// decides about it, and its input schema.
func (t *tool) Spec() agent.ToolSpec {
	v := t.srv.verdict(t.servers.cfg, t.mcpName)
	desc := fmt.Sprintf("[MCP server %s, tool %s] %s", t.srv.name, t.mcpName, strings.TrimSpace(t.def.Description))
	if v.Decision == Approve {
		desc += "\n(Each call waits for a person to approve it.)"
	}
	return agent.ToolSpec{Name: t.name, Description: desc, InputSchema: inputSchema(t.def)}
}

// inputSchema is the tool's schema as the server gave it, an object
// schema in any case.
func inputSchema(def *sdk.Tool) json.RawMessage {
	raw, err := json.Marshal(def.InputSchema)
	var probe struct {
		Type string `json:"type"`
	}
	if err != nil || json.Unmarshal(raw, &probe) != nil || probe.Type != "object" {
		return json.RawMessage(`{"type":"object"}`)
	}
	return raw
}

// Describe is the status line of a call.
func (t *tool) Describe(agent.ToolCall) string {
	return fmt.Sprintf("calling %s on MCP server %s…", t.mcpName, t.srv.name)
}

// hints are a tool's annotations in words, for the card and `mcp list`:
// shown, never used to decide.
func hints(def *sdk.Tool) string {
	a := def.Annotations
	if a == nil {
		return "none"
	}
	var out []string
	if a.ReadOnlyHint {
		out = append(out, "read-only")
	}
	switch {
	case a.ReadOnlyHint:
	case a.DestructiveHint == nil:
		out = append(out, "may be destructive (it does not say)")
	case *a.DestructiveHint:
		out = append(out, "destructive")
	}
	if a.IdempotentHint {
		out = append(out, "idempotent")
	}
	if a.OpenWorldHint != nil && *a.OpenWorldHint {
		out = append(out, "reaches outside systems")
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}
