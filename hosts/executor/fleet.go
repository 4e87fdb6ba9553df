package executor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/opsbot/opsbot/approvals/redact"
	"github.com/opsbot/opsbot/hosts"
)

// Fleet runs the agent's and the chat commands' commands on the fleet: it
// is the hosts.Executor of a real deployment.
type Fleet struct {
	Fleet *hosts.Fleet
	// StreamLimit caps what is kept of stdout and of stderr each (default
	// 64 KiB, its head and its tail); the combined output the hosts
	// package keeps is capped on its own.
	StreamLimit int
	// Redactor redacts the output before anyone sees it: the chat, the
	// model, job tails (nil: one with the default rules only).
	Redactor *redact.Redactor
}

var _ hosts.Executor = (*Fleet)(nil)

// Resolve turns a target into host names.
func (e *Fleet) Resolve(target string) ([]string, error) {
	hs, err := e.Fleet.Inventory.Resolve(target)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(hs))
	for i, h := range hs {
		names[i] = h.Name
	}
	return names, nil
}

// Exec runs command on the hosts through hosts.RunMany.
func (e *Fleet) Exec(ctx context.Context, names []string, command string, opts hosts.ExecOptions) []hosts.ExecResult {
	var hs []hosts.Host
	for _, n := range names {
		if h, ok := e.Fleet.Inventory.Lookup(n); ok {
			hs = append(hs, h)
		}
	}
	limit := e.StreamLimit
	if limit <= 0 {
		limit = 64 << 10
	}
	var mu sync.Mutex
	streams := map[string]*[2]tailBuffer{}
	outs := map[string]*[2]*redact.Stream{}
	for _, h := range hs {
		streams[h.Name] = &[2]tailBuffer{{limit: limit}, {limit: limit}}
		outs[h.Name] = e.redactedOutput(h.Name, streams[h.Name], opts.OnOutput)
	}
	hopts := hosts.Options{Timeout: opts.Timeout, Dir: opts.Dir, Approval: opts.Approval}
	if !opts.Approved { // what no person approved runs in the sandbox
		hopts.Sandbox = &hosts.Sandbox{ConnectPorts: opts.ConnectPorts, Hidden: opts.Hidden, Env: opts.Env}
		hopts.Hidden, hopts.Env, hopts.Scheduled = opts.Hidden, opts.Env, opts.Scheduled
	}
	if opts.Stdin != "" {
		hopts.Stdin = strings.NewReader(opts.Stdin)
	}
	// The working directory is the bot's own (a session's folder): it
	// means nothing on an SSH host, which runs in its login directory.
	runner := hosts.RunnerFunc(func(ctx context.Context, h hosts.Host, command string, o hosts.Options, onChunk func(hosts.Chunk)) (hosts.Result, error) {
		if !h.IsLocal() {
			o.Dir = ""
		}
		return e.Fleet.Run(ctx, h, command, o, onChunk)
	})
	var onResult func(hosts.HostResult)
	if opts.OnResult != nil {
		onResult = func(r hosts.HostResult) {
			mu.Lock()
			o := outs[r.Host.Name]
			o[0].Flush() // its last line, unfinished, is its output too
			o[1].Flush()
			res := execResult(r, streams[r.Host.Name])
			mu.Unlock()
			opts.OnResult(res)
		}
	}
	results := hosts.RunMany(ctx, runner, hs, command, hopts, hosts.FanOut{OnChunk: func(c hosts.Chunk) {
		mu.Lock()
		defer mu.Unlock()
		outs[c.Host][min(int(c.Stream), 2)-1].Write(c.Data)
	}, OnResult: onResult})
	for _, o := range outs {
		o[0].Flush()
		o[1].Flush()
	}
	out := make([]hosts.ExecResult, len(results))
	for i, r := range results {
		out[i] = execResult(r, streams[r.Host.Name])
	}
	if len(names) != len(hs) {
		out = append(out, hosts.ExecResult{Host: strings.Join(names, ","), ExitCode: -1, Err: errors.New("unknown host")})
	}
	return out
}

// execResult is a host's result with the output kept of it.
func execResult(r hosts.HostResult, s *[2]tailBuffer) hosts.ExecResult {
	return hosts.ExecResult{Host: r.Host.Name, ExitCode: r.Result.ExitCode, Signal: r.Result.Signal, Duration: r.Result.Duration,
		Stdout: s[0].String(), Stderr: s[1].String(), Truncated: r.Result.Truncated || s[0].cut || s[1].cut,
		Killed: r.Result.TimedOut || errors.Is(r.Err, context.Canceled), Err: r.Err}
}

// redactedOutput is a host's stdout and stderr behind the redactor: each
// holds back its unfinished last line, so a secret split across chunks is
// caught, and passes on redacted lines to the kept tail and onOutput.
func (e *Fleet) redactedOutput(host string, tails *[2]tailBuffer, onOutput func(string, bool, []byte)) *[2]*redact.Stream {
	red := e.Redactor
	if red == nil {
		red = redact.New()
	}
	var out [2]*redact.Stream
	for i := range out {
		out[i] = red.NewStream(func(s string) error {
			tails[i].Write([]byte(s))
			if onOutput != nil {
				onOutput(host, i == 1, []byte(s))
			}
			return nil
		})
	}
	return &out
}

// tailBuffer keeps the head and the tail of what is written to it,
// limit bytes in all: the column headers and the first error, and how the
// command ended (exec.output_limit keeps head and tail the same way).
type tailBuffer struct {
	limit     int
	head, buf []byte
	cut       bool
	cutBytes  int
}

func (t *tailBuffer) Write(p []byte) {
	if n := min(t.limit/2-len(t.head), len(p)); n > 0 {
		t.head, p = append(t.head, p[:n]...), p[n:]
	}
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - (t.limit - t.limit/2); over > 0 {
		t.buf, t.cut, t.cutBytes = append(t.buf[:0:0], t.buf[over:]...), true, t.cutBytes+over
	}
}

func (t *tailBuffer) String() string {
	if t.cut {
		return strings.ToValidUTF8(string(t.head), "") + fmt.Sprintf("\n…[%d bytes of output cut here]…\n", t.cutBytes) +
			strings.ToValidUTF8(string(t.buf), "")
	}
	return string(t.head) + string(t.buf)
}
