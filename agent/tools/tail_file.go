package tools

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

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

// Concurrent reports whether the call asks no person.
func (t *TailFile) Concurrent(call agent.ToolCall) bool { return t.read().concurrent(call) }

// Call builds the tail command and runs it like run_command.
func (t *TailFile) Call(ctx context.Context, call agent.ToolCall) agent.ToolResult {
	return t.read().run(ctx, call)
}

func (t *TailFile) read() hostRead { return hostRead{guard: t.Guard, build: tailCommand} }

// tailCommand is the command tail_file runs.
func tailCommand(call agent.ToolCall) (target, command string, err error) {
	var in struct {
		Target string `json:"target"`
		Path   string `json:"path"`
		Bytes  int    `json:"bytes"`
	}
	if err := decodeInput(call, &in); err != nil {
		return "", "", err
	}
	if strings.TrimSpace(in.Target) == "" || strings.TrimSpace(in.Path) == "" {
		return "", "", errors.New("tail_file needs a target and a path")
	}
	n := min(max(in.Bytes, 0), maxTailBytes)
	if n == 0 {
		n = 8192
	}
	path, err := quote(in.Path)
	if err != nil {
		return "", "", err
	}
	return in.Target, fmt.Sprintf("tail -c %d -- %s", n, path), nil
}
