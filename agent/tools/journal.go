package tools

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
)

//go:embed journal.md
var journalDescription string

// Journal is `journal`: a host's systemd journal, by unit, time and
// priority, run as `journalctl` through the guard like run_command.
type Journal struct{ Guard *approvals.Guard }

var (
	_ agent.Tool       = (*Journal)(nil)
	_ agent.Concurrent = (*Journal)(nil)
)

// The entries journal reads by default and at most.
const (
	journalLines    = 200
	maxJournalLines = 2000
)

// priority is what journalctl -p takes: a level by name or number, or a
// range of them.
var priority = regexp.MustCompile(`^(emerg|alert|crit|err|warning|notice|info|debug|[0-7])(\.\.(emerg|alert|crit|err|warning|notice|info|debug|[0-7]))?$`)

type journalInput struct {
	Host     string `json:"host"`
	Unit     string `json:"unit"`
	Since    string `json:"since"`
	Priority string `json:"priority"`
	Lines    int    `json:"lines"`
}

// Spec describes the tool.
func (*Journal) Spec() agent.ToolSpec {
	return spec("journal", journalDescription,
		`{"type":"object","properties":{"host":{"type":"string","description":"host, group:NAME, or comma list"},"unit":{"type":"string","description":"systemd unit, e.g. nginx.service; empty: all"},"since":{"type":"string","description":"e.g. \"1 hour ago\", \"2026-11-27 14:00\", \"today\""},"priority":{"type":"string","description":"emerg, alert, crit, err, warning, notice, info, debug, or a range like err..warning"},"lines":{"type":"integer","description":"the last N entries, default 200, at most 2000"}},"required":["host"]}`)
}

// Describe is the status line.
func (*Journal) Describe(call agent.ToolCall) string {
	var in journalInput
	_ = decodeInput(call, &in)
	if in.Unit == "" {
		return fmt.Sprintf("reading the journal on %s…", in.Host)
	}
	return fmt.Sprintf("reading the journal of %s on %s…", in.Unit, in.Host)
}

// Concurrent reports whether the call asks no person.
func (t *Journal) Concurrent(call agent.ToolCall) bool { return t.read().concurrent(call) }

// Call builds the command and runs it like run_command.
func (t *Journal) Call(ctx context.Context, call agent.ToolCall) agent.ToolResult {
	return t.read().run(ctx, call)
}

func (t *Journal) read() hostRead { return hostRead{guard: t.Guard, build: journalCommand} }

// journalCommand is the command journal runs. Each value the model gives
// is one quoted word with its option (--unit=…), so that none can be read
// as another option.
func journalCommand(call agent.ToolCall) (target, command string, err error) {
	var in journalInput
	if err := decodeInput(call, &in); err != nil {
		return "", "", err
	}
	if strings.TrimSpace(in.Host) == "" {
		return "", "", errors.New("journal needs a host")
	}
	if in.Priority != "" && !priority.MatchString(in.Priority) {
		return "", "", fmt.Errorf("priority %q is not one of emerg, alert, crit, err, warning, notice, info, debug, or a range like err..warning", in.Priority)
	}
	args := []string{"journalctl", "--no-pager", "-o", "short-iso", "-n", fmt.Sprint(min(orDefault(in.Lines, journalLines), maxJournalLines))}
	for _, opt := range [][2]string{{"--unit=", in.Unit}, {"--since=", in.Since}, {"--priority=", in.Priority}} {
		if strings.TrimSpace(opt[1]) == "" {
			continue
		}
		word, err := quote(opt[0] + opt[1])
		if err != nil {
			return "", "", err
		}
		args = append(args, word)
	}
	return in.Host, strings.Join(args, " "), nil
}
