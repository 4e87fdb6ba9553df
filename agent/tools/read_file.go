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

//go:embed read_file.md
var readFileDescription string

// ReadFile is `read_file`: lines of a file on a host, from an offset, run
// as `sed -n` through the guard like run_command.
type ReadFile struct{ Guard *approvals.Guard }

var (
	_ agent.Tool       = (*ReadFile)(nil)
	_ agent.Concurrent = (*ReadFile)(nil)
)

// The lines read_file reads by default and at most, and the bytes it
// passes on whatever the lines' length.
const (
	readLines    = 200
	maxReadLines = 2000
	maxReadBytes = 64 << 10
)

type readFileInput struct {
	Host   string `json:"host"`
	Path   string `json:"path"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

// Spec describes the tool.
func (*ReadFile) Spec() agent.ToolSpec {
	return spec("read_file", readFileDescription,
		`{"type":"object","properties":{"host":{"type":"string","description":"host, group:NAME, or comma list"},"path":{"type":"string","description":"absolute path of the file"},"offset":{"type":"integer","description":"first line, from 1 (default 1)"},"limit":{"type":"integer","description":"how many lines, default 200, at most 2000"}},"required":["host","path"]}`)
}

// Describe is the status line.
func (*ReadFile) Describe(call agent.ToolCall) string {
	var in readFileInput
	_ = decodeInput(call, &in)
	return fmt.Sprintf("reading %s on %s…", in.Path, in.Host)
}

// Concurrent reports whether the call asks no person.
func (t *ReadFile) Concurrent(call agent.ToolCall) bool { return t.read().concurrent(call) }

// Call builds the command and runs it like run_command.
func (t *ReadFile) Call(ctx context.Context, call agent.ToolCall) agent.ToolResult {
	return t.read().run(ctx, call)
}

func (t *ReadFile) read() hostRead { return hostRead{guard: t.Guard, build: readFileCommand} }

// readFileCommand is the command read_file runs: the lines from offset,
// limit of them, the first maxReadBytes of those.
func readFileCommand(call agent.ToolCall) (target, command string, err error) {
	var in readFileInput
	if err := decodeInput(call, &in); err != nil {
		return "", "", err
	}
	if strings.TrimSpace(in.Host) == "" || strings.TrimSpace(in.Path) == "" {
		return "", "", errors.New("read_file needs a host and a path")
	}
	from := max(in.Offset, 1)
	to := from + min(orDefault(in.Limit, readLines), maxReadLines) - 1
	path, err := quote(in.Path)
	if err != nil {
		return "", "", err
	}
	return in.Host, fmt.Sprintf("sed -n '%d,%dp;%dq' -- %s | head -c %d", from, to, to, path, maxReadBytes), nil
}
