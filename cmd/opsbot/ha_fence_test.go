package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/mcp"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/bot"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/store/leader"
)

// countingMCP is an MCP server whose one tool, restart, counts its calls.
func countingMCP(t *testing.T, calls *atomic.Int32) string {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "counting", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "restart"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		calls.Add(1)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "restarted"}}}, nil, nil
	})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

// postRecorder is a platform that keeps what reaches it: posts, edits,
// task cards and plan blocks (as Slack's connector shows them).
type postRecorder struct{ posts, edits, tasks, plans atomic.Int32 }

func (*postRecorder) Name() string              { return "rec" }
func (*postRecorder) Limits() connectors.Limits { return connectors.Limits{MaxText: 4000} }
func (*postRecorder) Start(ctx context.Context, _ connectors.Handler) error {
	<-ctx.Done()
	return nil
}

func (p *postRecorder) Post(context.Context, connectors.Dest, connectors.Message) (connectors.Ref, error) {
	p.posts.Add(1)
	return connectors.Ref{Platform: "rec", Channel: "C1", ID: "1"}, nil
}

func (p *postRecorder) Edit(context.Context, connectors.Ref, connectors.Message) error {
	p.edits.Add(1)
	return nil
}

func (p *postRecorder) UpdateTask(context.Context, connectors.Ref, connectors.Task) error {
	p.tasks.Add(1)
	return nil
}

func (p *postRecorder) EditPlan(context.Context, connectors.Ref, string, []connectors.Task) error {
	p.plans.Add(1)
	return nil
}

func (p *postRecorder) reached() int32 {
	return p.posts.Load() + p.edits.Load() + p.tasks.Load() + p.plans.Load()
}

// planEditor is the bot's wrapper's plan-block edit (bot/plancard_slack.go).
type planEditor interface {
	EditPlan(ctx context.Context, ref connectors.Ref, title string, steps []connectors.Task) error
}

// TestFencedSideEffects: once the lease is lost, a command, an MCP call,
// a post, an edit, a task card and a plan-block edit are refused, nothing
// reaches the host, the MCP server or the platform, and no audit row is
// written. Each is first
// shown to pass while the lease is held, so the test can fail.
func TestFencedSideEffects(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	dir := t.TempDir()
	yaml := "store:\n  path: " + filepath.Join(dir, "opsbot.db") + "\nmcp:\n  servers:\n    ops:\n      type: http\n      url: " +
		countingMCP(t, &calls) + "\n      default: allow\n"
	if err := os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(filepath.Join(dir, "c.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	rt, err := build(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	var lost atomic.Bool
	rt.fence.set(func() error {
		if lost.Load() {
			return leader.ErrNotLeader
		}
		return nil
	})
	rt.addMCP(agent.NewRegistry(), &approvals.Guard{})
	settle, cancel := context.WithTimeout(ctx, 2*time.Minute)
	rt.mcp.Settle(settle)
	cancel()
	tool, ok := rt.mcp.Tool("ops" + mcp.Separator + "restart")
	if !ok {
		t.Fatalf("no ops__restart tool: %+v", rt.mcp.Status())
	}
	rec := &postRecorder{}
	platforms := bot.NewPlatforms(rt.red, rt.log, rec)
	platforms.Fence(rt.fence.err)
	poster, _ := platforms.ReportPoster("rec")
	tasks, hasTasks := poster.(connectors.TaskUpdater)
	plans, hasPlans := poster.(planEditor)
	if !hasTasks || !hasPlans {
		t.Fatal("the bot's platform wrapper shows no task cards or plan blocks")
	}
	card := connectors.Task{ID: "step-1", Title: "restart api", Status: connectors.TaskInProgress}
	dest := connectors.Dest{Platform: "rec", Channel: "C1"}

	sideEffects := func() (ran int, errs []error) {
		res := rt.run.Exec(ctx, []string{hosts.LocalHost}, "true", hosts.ExecOptions{Timeout: time.Minute})
		errs = append(errs, res[0].Err)
		if r := tool.Call(ctx, agent.ToolCall{ID: "c1", Name: "ops__restart", Input: []byte(`{}`)}); r.IsError {
			errs = append(errs, errors.New(r.Content))
		}
		ref, err := poster.Post(ctx, dest, connectors.Message{Text: "report"})
		errs = append(errs, err, poster.Edit(ctx, ref, connectors.Message{Text: "report, edited"}),
			tasks.UpdateTask(ctx, ref, card), plans.EditPlan(ctx, ref, "Plan — Goal: restart", []connectors.Task{card}))
		return int(calls.Load() + rec.reached()), errs
	}
	const each = 5 // the MCP call, the post, the edit, the task card, the plan block
	ran, errs := sideEffects()
	if err := errors.Join(errs...); err != nil || ran != each {
		t.Fatalf("while leading: %d reached the MCP server and platform (want %d), err %v", ran, each, err)
	}
	rows := auditRows(t, rt)
	if rows == 0 {
		t.Fatal("the command and the MCP call left no audit row while leading")
	}

	lost.Store(true)
	ran, errs = sideEffects()
	if ran != each {
		t.Errorf("after the lease was lost %d more side effects reached the MCP server or platform", ran-each)
	}
	for i, err := range errs {
		if err == nil {
			t.Errorf("side effect %d was not refused", i)
		}
	}
	if got := auditRows(t, rt); got != rows {
		t.Errorf("a deposed leader wrote %d audit rows", got-rows)
	}
}

func auditRows(t *testing.T, rt *parts) int {
	t.Helper()
	trail, err := rt.store.Audit().AuditTrail(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	return len(trail)
}

// TestCommandWaitsForTheReplica: with a replicated database every command
// waits for the sidecar's sync first; while the sync fails it does not
// run, and says why.
func TestCommandWaitsForTheReplica(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "c.yaml"), []byte("store:\n  path: "+filepath.Join(dir, "opsbot.db")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(filepath.Join(dir, "c.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rt, err := build(t.Context(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	var syncs atomic.Int32
	var down atomic.Bool
	down.Store(true)
	rt.fence.replicateWith(func(context.Context) error {
		syncs.Add(1)
		if down.Load() {
			return errors.New("the Litestream sidecar does not answer on its control socket")
		}
		return nil
	})
	run := func() hosts.ExecResult {
		return rt.run.Exec(t.Context(), []string{hosts.LocalHost}, "echo ran-it", hosts.ExecOptions{Timeout: time.Minute})[0]
	}
	if res := run(); res.Err == nil || !strings.Contains(res.Err.Error(), "could not copy its records to its replica first") || res.Stdout != "" {
		t.Errorf("a command while the replica is down: %+v", res)
	}
	down.Store(false)
	if res := run(); res.Err != nil || !strings.Contains(res.Stdout, "ran-it") {
		t.Fatalf("a command with the replica up: %+v", res)
	}
	if n := syncs.Load(); n < 2 {
		t.Errorf("%d syncs for 2 commands", n)
	}
	// The lease lapses while the sync waits: the command does not run
	// on the fence it passed before the sync.
	var lapsed atomic.Bool
	rt.fence.set(func() error {
		if lapsed.Load() {
			return errors.New("this opsbot no longer holds a fresh lease")
		}
		return nil
	})
	rt.fence.replicateWith(func(context.Context) error { lapsed.Store(true); return nil })
	if res := run(); res.Err == nil || res.Stdout != "" {
		t.Errorf("a command whose lease lapsed during its sync: %+v", res)
	}
}
