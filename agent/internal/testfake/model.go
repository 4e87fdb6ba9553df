package testfake

import (
	"context"
	"encoding/json"
	"iter"
	"strconv"
	"sync"

	"github.com/opsbot/opsbot/agent"
)

// Step is one scripted model response, in the loop's own terms: it yields
// the events of one call. A step may block until a channel closes or ctx
// ends, to test a cancel mid-stream.
type Step func(ctx context.Context, req agent.Request, yield func(agent.StreamEvent) bool)

// Model is a fake agent.Provider below the wire formats: each call replays
// the next step and records the request it got. Past its steps it answers
// "(script ended)".
type Model struct {
	mu       sync.Mutex
	Steps    []Step
	requests []agent.Request
}

var _ agent.Provider = (*Model)(nil)

// Stream replays the next step.
func (m *Model) Stream(ctx context.Context, req agent.Request) iter.Seq[agent.StreamEvent] {
	return func(yield func(agent.StreamEvent) bool) {
		m.mu.Lock()
		m.requests = append(m.requests, req)
		n := len(m.requests)
		var step Step
		if n <= len(m.Steps) {
			step = m.Steps[n-1]
		}
		m.mu.Unlock()
		if step == nil {
			yield(agent.StreamEvent{Kind: agent.EventText, Text: "(script ended)"})
			yield(agent.StreamEvent{Kind: agent.EventStop, StopReason: agent.StopEndTurn})
			return
		}
		step(ctx, req, yield)
	}
}

// Requests are the requests the model got, in order.
func (m *Model) Requests() []agent.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]agent.Request(nil), m.requests...)
}

// Text is a step that answers with text, in pieces, and counts 10 tokens
// in, 5 out.
func Text(pieces ...string) Step {
	return func(_ context.Context, _ agent.Request, yield func(agent.StreamEvent) bool) {
		for _, p := range pieces {
			if !yield(agent.StreamEvent{Kind: agent.EventText, Text: p}) {
				return
			}
		}
		yield(agent.StreamEvent{Kind: agent.EventUsage, Usage: agent.Usage{InputTokens: 10, OutputTokens: 5}})
		yield(agent.StreamEvent{Kind: agent.EventStop, StopReason: agent.StopEndTurn})
	}
}

// Calls is a step that asks for tool calls, given as name, JSON input
// pairs, after text (when not empty). A call's id names the tool, its
// place in the step and the request's length.
func Calls(text string, nameInputs ...string) Step {
	return func(_ context.Context, req agent.Request, yield func(agent.StreamEvent) bool) {
		if text != "" && !yield(agent.StreamEvent{Kind: agent.EventText, Text: text}) {
			return
		}
		for i := 0; i+1 < len(nameInputs); i += 2 {
			id := "toolu_" + nameInputs[i] + "_" + string(rune('a'+i/2)) + "_" + strconv.Itoa(len(req.Messages))
			call := agent.Block{Type: agent.BlockToolUse, ID: id, Name: nameInputs[i], Input: json.RawMessage(nameInputs[i+1])}
			if !yield(agent.StreamEvent{Kind: agent.EventToolCall, ToolCall: call}) {
				return
			}
		}
		yield(agent.StreamEvent{Kind: agent.EventStop, StopReason: agent.StopToolUse})
	}
}

// Tool is a hand-written fake tool: Call runs Fn.
type Tool struct {
	Name string
	Fn   func(ctx context.Context, call agent.ToolCall) agent.ToolResult
}

var _ agent.Tool = Tool{}

// Spec describes the tool as "test tool NAME", taking any object.
func (f Tool) Spec() agent.ToolSpec {
	return agent.ToolSpec{Name: f.Name, Description: "test tool " + f.Name, InputSchema: json.RawMessage(`{"type":"object"}`)}
}

// Call runs Fn.
func (f Tool) Call(ctx context.Context, call agent.ToolCall) agent.ToolResult { return f.Fn(ctx, call) }

// Echo is the tool `echo`: it answers with its input.
func Echo() agent.Tool {
	return Tool{Name: "echo", Fn: func(_ context.Context, call agent.ToolCall) agent.ToolResult {
		return agent.ToolResult{Content: "echo:" + string(call.Input), Summary: "echoed"}
	}}
}
