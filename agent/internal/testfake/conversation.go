package testfake

import (
	"encoding/json"

	"github.com/opsbot/opsbot/agent"
)

// Conversation is a request with every kind of block: text, a tool
// call, two tool calls in one message (one without input), a failed tool
// result, and a user message holding results and text together. Each
// provider's request.golden.json is its wire form.
func Conversation() agent.Request {
	return agent.Request{
		System: "You are opsbot. Hosts: local, web1.",
		Messages: []agent.Message{
			{Role: agent.RoleUser, Content: []agent.Block{{Type: agent.BlockText, Text: "how full is the disk on local?"}}},
			{Role: agent.RoleAssistant, Content: []agent.Block{
				{Type: agent.BlockText, Text: "Let me look."},
				{Type: agent.BlockToolUse, ID: "toolu_A", Name: "run_command", Input: json.RawMessage(`{"target":"local","command":"df -h /"}`)},
			}},
			{Role: agent.RoleUser, Content: []agent.Block{
				{Type: agent.BlockToolResult, ToolUseID: "toolu_A", Content: "Filesystem Size Used Avail Use% Mounted on\n/dev/sda1 50G 21G 29G 42% /"},
			}},
			{Role: agent.RoleAssistant, Content: []agent.Block{
				{Type: agent.BlockText, Text: ""}, // dropped: the API refuses empty text
				{Type: agent.BlockToolUse, ID: "toolu_B", Name: "run_command", Input: json.RawMessage(`{"target":"web1","command":"uptime"}`)},
				{Type: agent.BlockToolUse, ID: "toolu_C", Name: "list_hosts"},
			}},
			{Role: agent.RoleUser, Content: []agent.Block{
				{Type: agent.BlockToolResult, ToolUseID: "toolu_B", Content: "ssh: connect to host web1 port 22: Connection refused", IsError: true},
				{Type: agent.BlockToolResult, ToolUseID: "toolu_C", Content: "local\nweb1"},
				{Type: agent.BlockText, Text: "and is web1 up?"},
			}},
		},
		Tools: []agent.ToolSpec{
			{Name: "run_command", Description: "Run a shell command on a target host.", InputSchema: json.RawMessage(`{
				"type": "object",
				"properties": {
					"target": {"type": "string", "description": "host or group"},
					"command": {"type": "string"},
					"timeout": {"type": "integer", "minimum": 1}
				},
				"required": ["target", "command"],
				"additionalProperties": false
			}`)},
			{Name: "list_hosts", Description: "List the hosts this conversation may use."},
		},
	}
}
