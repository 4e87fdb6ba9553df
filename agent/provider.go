package agent

import (
	"context"
	"encoding/json"
	"iter"
)

// Role says who wrote a message.
type Role string

// The roles of a conversation. Tool results travel in user messages, as
// both wire formats expect.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// BlockType is the kind of a content block.
type BlockType string

// The content block types.
const (
	BlockText       BlockType = "text"
	BlockToolUse    BlockType = "tool_use"
	BlockToolResult BlockType = "tool_result"
)

// Block is one content block. The same struct carries the model's text and
// tool calls and the tool results sent back, told apart by Type.
type Block struct {
	Type BlockType `json:"type"`
	// Text is the text of a text block.
	Text string `json:"text,omitempty"`
	// ID, Name and Input describe a tool call.
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// InputError, on a tool call, says why the model's arguments could
	// not be read (they were not a JSON object); Input is then {}. The
	// loop answers such a call with an error the model can correct.
	InputError string `json:"input_error,omitempty"`
	// ToolUseID, Content and IsError describe a tool result.
	ToolUseID string `json:"tool_use_id,omitempty"`
	Content   string `json:"content,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`
}

// Message is one entry of the conversation.
type Message struct {
	Role    Role    `json:"role"`
	Content []Block `json:"content"`
}

// ToolSpec describes a tool to the model.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"` // a JSON Schema object
}

// Request is one model call.
type Request struct {
	Model     string
	System    string
	Messages  []Message
	Tools     []ToolSpec
	MaxTokens int
	// NoToolUse forbids tool calls in this response (tool_choice none)
	// while still listing the tools: the history holds tool blocks, which
	// some gateways refuse in a request that defines no tools.
	NoToolUse bool
	// CachePrefix is how many leading bytes of System stay the same from
	// call to call; a provider that caches prompts marks that prefix.
	CachePrefix int
	// CacheMarks are the blocks after which the request's prefix is sent
	// again, unchanged, by later calls: a provider that caches prompts at
	// marks (Anthropic's cache_control) marks these.
	CacheMarks []BlockRef
}

// BlockRef names one block of a request: Messages[Message].Content[Block].
type BlockRef struct{ Message, Block int }

// StopReason says why the model stopped.
type StopReason string

// The stop reasons, named as Anthropic names them; the OpenAI provider maps
// its finish_reason onto these.
const (
	StopEndTurn   StopReason = "end_turn"
	StopToolUse   StopReason = "tool_use"
	StopMaxTokens StopReason = "max_tokens"
	StopSequence  StopReason = "stop_sequence"
	StopRefusal   StopReason = "refusal"
)

// Usage counts tokens of one model call.
type Usage struct {
	// InputTokens are all the prompt's tokens, those read from the
	// provider's prompt cache included.
	InputTokens int `json:"input_tokens"`
	// CachedTokens are the part of InputTokens read from the cache.
	CachedTokens int `json:"cached_tokens,omitempty"`
	OutputTokens int `json:"output_tokens"`
}

// Total is every token of u, cached or not: what a budget counts.
func (u Usage) Total() int { return u.InputTokens + u.OutputTokens }

// add sums two counts.
func (u Usage) add(v Usage) Usage {
	return Usage{InputTokens: u.InputTokens + v.InputTokens, CachedTokens: u.CachedTokens + v.CachedTokens,
		OutputTokens: u.OutputTokens + v.OutputTokens}
}

// EventKind is the kind of a streamed event.
type EventKind int

// The kinds of StreamEvent.
const (
	// EventText carries a text delta in Text.
	EventText EventKind = iota + 1
	// EventToolCall carries one complete tool call, input parsed, in ToolCall.
	EventToolCall
	// EventStop carries the stop reason; it is the last event of a
	// successful response.
	EventStop
	// EventUsage carries token counts; it may come more than once (the
	// last one wins).
	EventUsage
	// EventError carries the error that ended the response; text already
	// streamed stays valid.
	EventError
)

// StreamEvent is one event of a streamed model response.
type StreamEvent struct {
	Kind       EventKind
	Text       string
	ToolCall   Block
	StopReason StopReason
	Usage      Usage
	Err        error
}

// Provider streams one model response. The sequence ends after an EventStop
// or an EventError; a provider retries overload and rate-limit errors
// itself, but only before it yielded any event of that response.
type Provider interface {
	Stream(ctx context.Context, req Request) iter.Seq[StreamEvent]
}

// ProviderFunc adapts a function to Provider.
type ProviderFunc func(ctx context.Context, req Request) iter.Seq[StreamEvent]

// Stream calls f.
func (f ProviderFunc) Stream(ctx context.Context, req Request) iter.Seq[StreamEvent] {
	return f(ctx, req)
}
