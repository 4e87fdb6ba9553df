package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/anthropic"
	"github.com/opsbot/opsbot/agent/internal/testfake"
	"github.com/opsbot/opsbot/agent/openai"
	"github.com/opsbot/opsbot/agent/persist"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/policy"
)

// wire is one of the two wire formats the agent is tested over: a scripted
// fake of the API, the real provider in front of it, and how to read the
// requests the fake got.
type wire struct {
	name    string
	sse     func(testfake.Turn) []byte
	rules   func(map[string]any) string
	noReply string
	// rateLimited is the API's body of a 429.
	rateLimited string
	provider    func(t *testing.T, url string) agent.Provider
	// results are the tool results of a request body, in order.
	results func(body map[string]any) []string
	// userTexts are the texts a request shows as the person's words.
	userTexts func(body map[string]any) []string
}

var wires = []wire{
	{
		name: "anthropic", sse: testfake.AnthropicSSE, rules: testfake.AnthropicRules,
		noReply:     `{"type":"error","error":{"type":"api_error","message":"no reply scripted"}}`,
		rateLimited: `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`,
		provider: func(t *testing.T, url string) agent.Provider {
			p, err := anthropic.New(anthropic.Config{APIKey: "sk-ant-test", BaseURL: url, Model: "claude-test-1"},
				anthropic.WithSleep((&testfake.Sleeps{}).Sleep))
			if err != nil {
				t.Fatal(err)
			}
			return p
		},
		results:   anthropicBlocks("user", "tool_result"),
		userTexts: anthropicBlocks("user", "text"),
	},
	{
		name: "openai", sse: testfake.OpenAISSE, rules: testfake.OpenAIRules,
		noReply:     `{"error":{"message":"no reply scripted","type":"server_error"}}`,
		rateLimited: `{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
		provider: func(t *testing.T, url string) agent.Provider {
			p, err := openai.New(openai.Config{APIKey: "sk-test", BaseURL: url + "/v1", Model: "gpt-test-1"},
				openai.WithSleep((&testfake.Sleeps{}).Sleep))
			if err != nil {
				t.Fatal(err)
			}
			return p
		},
		results:   openaiRole("tool"),
		userTexts: openaiRole("user"),
	},
}

// eachWire runs fn once per wire format, in parallel subtests.
func eachWire(t *testing.T, fn func(t *testing.T, w wire)) {
	t.Helper()
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			fn(t, w)
		})
	}
}

// model starts the fake API answering with turns, in order, enforcing the
// API's rules on every request, and returns it with a provider in front.
func (w wire) model(t *testing.T, turns ...testfake.Turn) (*testfake.Server, agent.Provider) {
	t.Helper()
	replies := make([]testfake.Reply, len(turns))
	for i, turn := range turns {
		replies[i] = testfake.Reply{Raw: w.sse(turn), Once: true}
	}
	return w.modelReplies(t, replies...)
}

// modelReplies is model with replies given whole (Build, errors, cuts).
func (w wire) modelReplies(t *testing.T, replies ...testfake.Reply) (*testfake.Server, agent.Provider) {
	t.Helper()
	f := testfake.NewServer(t, w.noReply, replies...)
	f.Rules = w.rules
	return f, w.provider(t, f.URL)
}

// reader is a scripted turn that reads the request it answers: its text
// is made by say from the tool results the request carries.
func (w wire) reader(say func(results []string) string) testfake.Reply {
	return testfake.Reply{Build: func(body map[string]any) []byte {
		return w.sse(testfake.Say(say(w.results(body))))
	}}
}

func anthropicBlocks(role, typ string) func(map[string]any) []string {
	return func(body map[string]any) []string {
		var out []string
		for _, m := range list(body["messages"]) {
			if m["role"] != role {
				continue
			}
			for _, b := range list(m["content"]) {
				if b["type"] != typ {
					continue
				}
				if typ == "text" {
					out = append(out, fmt.Sprint(b["text"]))
					continue
				}
				var s strings.Builder
				for _, c := range list(b["content"]) {
					s.WriteString(fmt.Sprint(c["text"]))
				}
				out = append(out, s.String())
			}
		}
		return out
	}
}

func openaiRole(role string) func(map[string]any) []string {
	return func(body map[string]any) []string {
		var out []string
		for _, m := range list(body["messages"]) {
			if m["role"] == role {
				out = append(out, fmt.Sprint(m["content"]))
			}
		}
		return out
	}
}

func list(v any) []map[string]any {
	raw, _ := v.([]any)
	out := make([]map[string]any, 0, len(raw))
	for _, x := range raw {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// fleet is a fake Executor: each command prints what outputs says, and
// every run is recorded.
type fleet struct {
	mu      sync.Mutex
	outputs map[string]string
	hosts   map[string][]string // group:NAME → hosts
	ran     []string            // "host: command"
	// during, when set, runs inside each command (to block or cancel).
	during func(ctx context.Context, command string)
}

func (f *fleet) Resolve(target string) ([]string, error) {
	if hs, ok := f.hosts[target]; ok {
		return hs, nil
	}
	return strings.Split(target, ","), nil
}

func (f *fleet) Exec(ctx context.Context, names []string, command string, _ hosts.ExecOptions) []hosts.ExecResult {
	out := make([]hosts.ExecResult, len(names))
	for i, h := range names {
		f.mu.Lock()
		f.ran = append(f.ran, h+": "+command)
		during := f.during
		f.mu.Unlock()
		if during != nil {
			during(ctx, command)
		}
		out[i] = hosts.ExecResult{Host: h, Stdout: f.outputs[command]}
		if ctx.Err() != nil {
			// As hosts/executor reports a run a cancel killed.
			out[i].Killed, out[i].ExitCode, out[i].Signal, out[i].Err = true, -1, "KILL", ctx.Err()
		}
	}
	return out
}

func (f *fleet) runs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.ran...)
}

// policy approves commands starting with one of risky, allows the rest.
type riskyPolicy struct{ risky []string }

func (p riskyPolicy) Check(_, command string) approvals.HostDecision {
	for _, r := range p.risky {
		if strings.HasPrefix(command, r) {
			return approvals.HostDecision{Action: policy.Approve, Reasons: []string{"changes the system"}}
		}
	}
	return approvals.HostDecision{Action: policy.Allow}
}

// approver approves after wait runs (nil: at once).
type approver struct {
	wait func(ctx context.Context) error
}

func (a approver) Approve(ctx context.Context, req approvals.CommandRequest, pending func(approvals.Pending)) (approvals.Outcome, error) {
	pending(approvals.Pending{ID: "1", Target: req.Target, Command: req.Command})
	if a.wait != nil {
		if err := a.wait(ctx); err != nil {
			return approvals.Outcome{State: "withdrawn"}, err
		}
	}
	return approvals.Outcome{Approved: true, State: "approved", DecidedBy: "bob"}, nil
}

// sqliteSession opens a real SQLite file with one session in it.
func sqliteSession(t *testing.T) (persist.History, agent.SessionInfo) {
	st, sess := testfake.Store(t)
	return persist.History{Store: st}, sess
}

// run is a run_command call's JSON input.
func run(target, command string) string {
	b, _ := json.Marshal(map[string]string{"target": target, "command": command})
	return string(b)
}
