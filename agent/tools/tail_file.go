package tools

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
)

//go:embed tail_file.md
var tailFileDescription string

// TailFile is `tail_file`: the end of a file on a host, capped, run as
// `tail -c` through the same guard as run_command.
type TailFile struct{ Guard *approvals.Guard }

var _ agent.Tool = (*TailFile)(nil)

// maxTailBytes caps what tail_file reads.
const maxTailBytes = 64 << 10

// Spec describes the tool.
func (*TailFile) Spec() agent.ToolSpec {
	return spec("tail_file", tailFileDescription,
		`{"type":"object","properties":{"target":{"type":"string","description":"host, group:NAME, or comma list"},"path":{"type":"string","description":"absolute path of the file"},"bytes":{"type":"integer","description":"how many bytes from the end, default 8192"}},"required":["target","path"]}`)
}

// Describe is the status line.
func (*TailFile) Describe(call agent.ToolCall) string {
	var in struct{ Target, Path string }
	_ = decodeInput(call, &in)
	return fmt.Sprintf("reading the end of %s on %s…", in.Path, in.Target)
}

// Call builds the tail command and runs it like run_command.
func (t *TailFile) Call(ctx context.Context, call agent.ToolCall) agent.ToolResult {
	var in struct {
		Target string `json:"target"`
		Path   string `json:"path"`
		Bytes  int    `json:"bytes"`
	}
	if err := decodeInput(call, &in); err != nil {
		return agent.Errorf("%v", err)
	}
	if strings.TrimSpace(in.Target) == "" || strings.TrimSpace(in.Path) == "" {
		return agent.Errorf("tail_file needs a target and a path")
	}
	n := min(max(in.Bytes, 0), maxTailBytes)
	if n == 0 {
		n = 8192
	}
	quoted, err := syntax.Quote(in.Path, syntax.LangBash)
	if err != nil {
		return agent.Errorf("the path cannot be quoted for a shell: %v", err)
	}
	input := fmt.Sprintf(`{"target":%q,"command":%q}`, in.Target, fmt.Sprintf("tail -c %d -- %s", n, quoted))
	return (&RunCommand{Guard: t.Guard}).Call(ctx, agent.ToolCall{ID: call.ID, Name: "run_command", Input: []byte(input), Session: call.Session, Emit: call.Emit})
}
