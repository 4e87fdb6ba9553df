package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
)

// Tool is one capability the model may call.
type Tool interface {
	Spec() ToolSpec
	Call(ctx context.Context, call ToolCall) ToolResult
}

// ToolCall is one invocation of a tool, with what the tool may need of the
// turn it runs in.
type ToolCall struct {
	ID      string
	Name    string
	Input   json.RawMessage
	Session SessionInfo
	// Emit reports progress (e.g. an approval pending) to the turn's caller.
	Emit func(Event)
}

// ToolResult is what the model reads back. A refusal (deny, expiry) is a
// result, not a Go error: the model must learn of it.
type ToolResult struct {
	Content string
	IsError bool
	// Summary is one line for people watching ("exit 0 in 120ms").
	Summary string
	// Runs are the commands the tool ran, for people (Event.Runs).
	Runs []CommandRun
	// compact asks the loop to compact the history after this result.
	compact bool
}

// Errorf builds an error result.
func Errorf(format string, args ...any) ToolResult {
	msg := fmt.Sprintf(format, args...)
	return ToolResult{Content: msg, IsError: true, Summary: msg}
}

// Registry holds the tools of an agent, by name.
type Registry struct {
	tools map[string]Tool
	// sources offer tools that come and go (AddSource).
	sources []ToolSource
}

// ToolSource offers tools that come and go while the agent runs, such as
// an MCP server's. Tools are the ones offered to the model now; Tool
// finds one by name, also one not offered, so that it can refuse a call
// itself and say why.
type ToolSource interface {
	Tools() []Tool
	Tool(name string) (Tool, bool)
}

// AddSource adds the tools of src, asked anew at every step. A registered
// tool of the same name wins over a source's.
func (r *Registry) AddSource(src ToolSource) {
	r.sources = append(r.sources, src)
}

// lookup finds a tool by name: a registered one, else a source's.
func (r *Registry) lookup(name string) (Tool, bool) {
	if t, ok := r.tools[name]; ok {
		return t, true
	}
	for _, src := range r.sources {
		if t, ok := src.Tool(name); ok {
			return t, true
		}
	}
	return nil, false
}

// NewRegistry builds a registry; a duplicate name is a programming error.
func NewRegistry(tools ...Tool) *Registry {
	r := &Registry{tools: map[string]Tool{}}
	for _, t := range tools {
		r.Add(t)
	}
	return r
}

// Add registers a tool, replacing none: a duplicate name panics.
func (r *Registry) Add(t Tool) {
	name := t.Spec().Name
	if _, dup := r.tools[name]; dup {
		panic("agent: tool registered twice: " + name)
	}
	r.tools[name] = t
}

// Without returns a registry of the same tools minus the named ones.
func (r *Registry) Without(names ...string) *Registry {
	out := &Registry{tools: map[string]Tool{}, sources: r.sources}
	for n, t := range r.tools {
		out.tools[n] = t
	}
	for _, n := range names {
		delete(out.tools, n)
	}
	return out
}

// Specs lists the tools for the model, sorted by name for stable prompts.
func (r *Registry) Specs() []ToolSpec {
	specs := make([]ToolSpec, 0, len(r.tools))
	for _, t := range r.tools {
		specs = append(specs, t.Spec())
	}
	for _, src := range r.sources {
		for _, t := range src.Tools() {
			if _, taken := r.tools[t.Spec().Name]; !taken {
				specs = append(specs, t.Spec())
			}
		}
	}
	sort.Slice(specs, func(i, j int) bool { return specs[i].Name < specs[j].Name })
	return specs
}

// Dispatch runs the named tool; an unknown name is an error result that
// lists the tools there are.
func (r *Registry) Dispatch(ctx context.Context, call ToolCall) ToolResult {
	t, ok := r.lookup(call.Name)
	if !ok {
		var names []string
		for _, s := range r.Specs() {
			names = append(names, s.Name)
		}
		return Errorf("unknown tool %q; the tools are: %v", call.Name, names)
	}
	if len(call.Input) == 0 {
		call.Input = json.RawMessage(`{}`)
	}
	return t.Call(ctx, call)
}

// schema is a shorthand for a JSON Schema object literal.
func schema(s string) json.RawMessage { return json.RawMessage(s) }

// Concurrent is a Tool some of whose calls may run at the same time as
// the other calls of a step. Concurrent reports whether this one may: it
// asks no person (no approval card can come of it) and changes nothing
// the step's other calls read. The calls of a tool without it run alone.
type Concurrent interface {
	Concurrent(call ToolCall) bool
}

// concurrent reports whether call may run alongside others.
func (r *Registry) concurrent(call ToolCall) bool {
	t, _ := r.lookup(call.Name)
	c, ok := t.(Concurrent)
	return ok && c.Concurrent(call)
}
