package mcp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/textcut"
)

// Call decides, asks people when the config says so, calls the server
// under its time limit, and returns the result cut and redacted; each
// step is audited.
func (t *tool) Call(ctx context.Context, call agent.ToolCall) agent.ToolResult {
	args, err := canonical(call.Input)
	if err != nil {
		return agent.Errorf("%s: %v", t.name, err)
	}
	v := t.srv.verdict(t.servers.cfg, t.mcpName)
	rec := t.servers.auditOf(call, t.srv.name, t.mcpName, args, v)
	if res := t.refuse(v); res != nil {
		rec.record(ctx, ActionRefused, map[string]any{"outcome": "refused", "why": res.Content})
		return *res
	}
	approval := ""
	if v.Decision == Approve {
		id, res := t.approve(ctx, call, args, v)
		if res != nil {
			rec.record(ctx, ActionRefused, map[string]any{"outcome": "not_approved", "why": res.Content})
			return *res
		}
		approval = id
	}
	return t.run(ctx, rec, args, approval)
}

// refuse is the answer to a call that is not made at all: denied by the
// config, or to a server that is down.
func (t *tool) refuse(v Verdict) *agent.ToolResult {
	if v.Decision == Deny {
		return refusal("refused: " + v.Reason)
	}
	if snap := t.srv.snapshot(); snap.session == nil {
		return refusal(fmt.Sprintf("unavailable: MCP server %s is down (%s); %s was not called", t.srv.name, snap.down, t.mcpName))
	}
	return nil
}

// run makes the call; approval is the approval it claimed, whose
// follow-up closes as the call starts (as a command's does).
func (t *tool) run(ctx context.Context, rec *audit, args []byte, approval string) agent.ToolResult {
	opt := &t.servers.opt
	if opt.Fence != nil {
		if err := opt.Fence(); err != nil {
			return *refusal(fmt.Sprintf("not called: %s; %s on %s did not run", err, t.mcpName, t.srv.name))
		}
	}
	if approval != "" && opt.FollowUps != nil {
		if _, err := opt.FollowUps.FinishFollowUp(context.WithoutCancel(ctx), approval); err != nil {
			opt.Log.Warn("close an approval's follow-up", "approval", approval, "err", err)
		}
	}
	rec.record(ctx, ActionStart, map[string]any{"approval": approval})
	start := time.Now()
	res, err := t.srv.call(ctx, t.mcpName, args)
	took := time.Since(start)
	if err != nil {
		why := t.failure(ctx, err)
		rec.record(ctx, ActionEnd, map[string]any{"outcome": "failed", "error": why, "duration_ms": took.Milliseconds()})
		return *refusal(why)
	}
	text := render(res)
	size := len(text)
	text, wasCut := cut(text, int(t.srv.cfg.MaxOutput), t.srv.name)
	text = opt.redact(text)
	rec.record(ctx, ActionEnd, map[string]any{"outcome": "ran", "is_error": res.IsError, "result_bytes": size, "cut": wasCut,
		"duration_ms": took.Milliseconds()})
	summary := fmt.Sprintf("%s/%s: %s in %s", t.srv.name, t.mcpName, textcut.Bytes(int64(size)), took.Round(time.Millisecond))
	if res.IsError {
		summary = fmt.Sprintf("%s/%s answered with an error in %s", t.srv.name, t.mcpName, took.Round(time.Millisecond))
	}
	return agent.ToolResult{Content: text, IsError: res.IsError, Summary: summary}
}

// failure says why a call brought no result, in words for the model and
// people.
func (t *tool) failure(ctx context.Context, err error) string {
	switch {
	case errors.Is(err, errUnavailable):
		return fmt.Sprintf("unavailable: MCP server %s is down; %s was not called", t.srv.name, t.mcpName)
	case ctx.Err() != nil:
		return fmt.Sprintf("stopped: %s on %s was cancelled before it answered", t.mcpName, t.srv.name)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("no answer from %s on %s within %s (mcp.servers.%s.timeout): not waited for further",
			t.mcpName, t.srv.name, t.srv.cfg.Timeout, t.srv.name)
	}
	return fmt.Sprintf("%s on %s failed: %s", t.mcpName, t.srv.name, t.servers.opt.redact(words(err)))
}
