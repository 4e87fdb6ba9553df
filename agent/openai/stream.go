package openai

import (
	"context"
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/provider"
	"github.com/opsbot/opsbot/agent/internal/streamretry"
)

// streamOnce makes one call and passes its events on. It returns nil when
// the response finished or the caller stopped listening, and the failure
// otherwise (retried by the caller if nothing was shown).
func (p *Provider) streamOnce(ctx context.Context, params sdk.ChatCompletionNewParams, out *streamretry.Emitter, alive func()) error {
	var failed *httpError
	stream := p.client.Chat.Completions.NewStreaming(ctx, params, option.WithMiddleware(captureErrors(&failed)))
	defer stream.Close()
	d := decoder{out: out, calls: map[int64]*toolCall{}}
	for stream.Next() {
		alive()
		d.handle(stream.Current())
		if out.Stopped() {
			return nil
		}
	}
	if err := stream.Err(); err != nil {
		if failed != nil {
			return failed
		}
		return err
	}
	return d.finish()
}

// toolCall is a tool call being assembled from the chunks of one index.
type toolCall struct {
	index    int64
	id, name string
	args     strings.Builder
}

// decoder turns the chunks of one response into agent.StreamEvents. Tool
// calls and usage are held until the stream ends: a call's arguments come
// in pieces, and the usage chunk (stream_options.include_usage) comes
// after the one with finish_reason.
type decoder struct {
	out          *streamretry.Emitter
	calls        map[int64]*toolCall
	usage        *agent.Usage
	finishReason string
}

// handle applies one chunk. Only choice 0 is read: opsbot never asks for n>1.
func (d *decoder) handle(c sdk.ChatCompletionChunk) {
	if c.Usage.PromptTokens > 0 || c.Usage.CompletionTokens > 0 {
		d.usage = &agent.Usage{InputTokens: int(c.Usage.PromptTokens), CachedTokens: int(c.Usage.PromptTokensDetails.CachedTokens),
			OutputTokens: int(c.Usage.CompletionTokens)}
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		if ch.Delta.Content != "" {
			d.out.Emit(agent.StreamEvent{Kind: agent.EventText, Text: ch.Delta.Content})
		}
		if ch.Delta.Refusal != "" {
			d.out.Emit(agent.StreamEvent{Kind: agent.EventText, Text: ch.Delta.Refusal})
		}
		for _, tc := range ch.Delta.ToolCalls {
			d.addPiece(tc)
		}
		if ch.FinishReason != "" {
			d.finishReason = ch.FinishReason
		}
	}
}

// addPiece appends a piece of a tool call: the first piece of an index
// carries its id and name, later ones more of the arguments.
func (d *decoder) addPiece(tc sdk.ChatCompletionChunkChoiceDeltaToolCall) {
	c := d.calls[tc.Index]
	if c == nil {
		c = &toolCall{index: tc.Index}
		d.calls[tc.Index] = c
	}
	if tc.ID != "" {
		c.id = tc.ID
	}
	if tc.Function.Name != "" {
		c.name = tc.Function.Name
	}
	c.args.WriteString(tc.Function.Arguments)
}

// finish yields the tool calls, the usage and the stop reason once the
// stream ended.
func (d *decoder) finish() error {
	if d.finishReason == "" {
		return streamretry.ErrEndedEarly
	}
	stop := stopReason(d.finishReason, len(d.calls) > 0)
	calls := make([]*toolCall, 0, len(d.calls))
	for _, c := range d.calls {
		calls = append(calls, c)
	}
	sort.Slice(calls, func(i, j int) bool { return calls[i].index < calls[j].index })
	for _, c := range calls {
		input, err := provider.ObjectJSON([]byte(c.args.String()))
		inputErr := ""
		if err != nil {
			if stop == agent.StopMaxTokens {
				continue // cut by the bound; the stop reason says so
			}
			// Passed on, so that the model is told and can retry: small
			// open models get arguments wrong now and then.
			input, inputErr = json.RawMessage("{}"), err.Error()
		}
		id := c.id
		if id == "" { // some compatible servers send none
			id = "call_" + strconv.FormatInt(c.index, 10)
		}
		if !d.out.Emit(agent.StreamEvent{Kind: agent.EventToolCall, ToolCall: agent.Block{
			Type: agent.BlockToolUse, ID: id, Name: c.name, Input: input, InputError: inputErr}}) {
			return nil
		}
	}
	if d.usage != nil && !d.out.Emit(agent.StreamEvent{Kind: agent.EventUsage, Usage: *d.usage}) {
		return nil
	}
	d.out.Emit(agent.StreamEvent{Kind: agent.EventStop, StopReason: stop})
	return nil
}

// stopReason maps finish_reason onto the neutral stop reasons. A server
// that answers tool calls with "stop" (some Ollama versions) still means
// tool_use.
func stopReason(finish string, hasCalls bool) agent.StopReason {
	switch finish {
	case "tool_calls", "function_call":
		return agent.StopToolUse
	case "stop":
		if hasCalls {
			return agent.StopToolUse
		}
		return agent.StopEndTurn
	case "length":
		return agent.StopMaxTokens
	case "content_filter":
		return agent.StopRefusal
	default:
		return agent.StopReason(finish)
	}
}
