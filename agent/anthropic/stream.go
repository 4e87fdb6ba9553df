package anthropic

import (
	"context"
	"encoding/json"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/provider"
	"github.com/opsbot/opsbot/agent/internal/streamretry"
)

// streamOnce makes one call and passes its events on. It returns nil when
// the response ended with message_stop or the caller stopped listening,
// and the failure otherwise (retried by the caller if nothing was shown).
func (p *Provider) streamOnce(ctx context.Context, params sdk.MessageNewParams, out *streamretry.Emitter, alive func()) error {
	stream := p.client.Messages.NewStreaming(ctx, params)
	defer stream.Close()
	d := decoder{out: out, calls: map[int64]*toolCall{}}
	for stream.Next() {
		alive()
		done, err := d.handle(stream.Current())
		if err != nil {
			return err
		}
		if done || out.Stopped() {
			return nil
		}
	}
	if err := stream.Err(); err != nil {
		return err
	}
	return streamretry.ErrEndedEarly
}

// toolCall is a tool_use block being assembled from input_json_delta pieces.
type toolCall struct {
	id, name string
	input    strings.Builder
	start    any // the input of content_block_start, used if no piece comes
}

// decoder turns the events of one response into agent.StreamEvents.
// Usage is held back until the end so that nothing is shown before the
// first text or tool call: an overload reported just after message_start
// can still be retried.
type decoder struct {
	out   *streamretry.Emitter
	calls map[int64]*toolCall
	usage agent.Usage
	stop  agent.StopReason
	// badCalls are tool calls whose input is not a JSON object: passed on
	// with InputError set so that the model is told and can retry, unless
	// the response stopped at max_tokens, which cut them.
	badCalls []agent.Block
}

// handle applies one SSE event; done is true after message_stop.
func (d *decoder) handle(ev sdk.MessageStreamEventUnion) (done bool, err error) {
	switch ev.Type {
	case "message_start":
		u := ev.Message.Usage
		d.setUsage(u.InputTokens+u.CacheCreationInputTokens+u.CacheReadInputTokens, u.CacheReadInputTokens, u.OutputTokens)
	case "content_block_start":
		d.startBlock(ev)
	case "content_block_delta":
		d.delta(ev)
	case "content_block_stop":
		d.stopBlock(ev.Index)
	case "message_delta":
		if ev.Delta.StopReason != "" {
			d.stop = agent.StopReason(ev.Delta.StopReason)
		}
		d.setUsage(ev.Usage.InputTokens+ev.Usage.CacheCreationInputTokens+ev.Usage.CacheReadInputTokens, ev.Usage.CacheReadInputTokens,
			ev.Usage.OutputTokens)
	case "message_stop":
		return true, d.finish()
	}
	return false, nil
}

// setUsage records token counts (cached: the part of input read from
// the prompt cache); zero leaves a count as it was (a message_delta
// repeats only what changed).
func (d *decoder) setUsage(input, cached, output int64) {
	if input > 0 {
		d.usage.InputTokens = int(input)
	}
	if cached > 0 {
		d.usage.CachedTokens = int(cached)
	}
	if output > 0 {
		d.usage.OutputTokens = int(output)
	}
}

// startBlock opens a text or tool_use block; other kinds (thinking,
// server tools) are not part of the neutral model and are skipped.
func (d *decoder) startBlock(ev sdk.MessageStreamEventUnion) {
	switch ev.ContentBlock.Type {
	case "text":
		d.text(ev.ContentBlock.Text)
	case "tool_use":
		d.calls[ev.Index] = &toolCall{id: ev.ContentBlock.ID, name: ev.ContentBlock.Name, start: ev.ContentBlock.Input}
	}
}

// delta applies a text or input piece.
func (d *decoder) delta(ev sdk.MessageStreamEventUnion) {
	switch ev.Delta.Type {
	case "text_delta":
		d.text(ev.Delta.Text)
	case "input_json_delta":
		if c := d.calls[ev.Index]; c != nil {
			c.input.WriteString(ev.Delta.PartialJSON)
		}
	}
}

// text yields a non-empty text delta.
func (d *decoder) text(s string) {
	if s != "" {
		d.out.Emit(agent.StreamEvent{Kind: agent.EventText, Text: s})
	}
}

// stopBlock completes a tool call and yields it.
func (d *decoder) stopBlock(index int64) {
	c := d.calls[index]
	if c == nil {
		return
	}
	delete(d.calls, index)
	raw := json.RawMessage(c.input.String())
	if len(strings.TrimSpace(c.input.String())) == 0 && c.start != nil {
		raw, _ = json.Marshal(c.start)
	}
	input, err := provider.ObjectJSON(raw)
	if err != nil {
		d.badCalls = append(d.badCalls, agent.Block{Type: agent.BlockToolUse, ID: c.id, Name: c.name,
			Input: json.RawMessage("{}"), InputError: err.Error()})
		return
	}
	d.out.Emit(agent.StreamEvent{Kind: agent.EventToolCall, ToolCall: agent.Block{
		Type: agent.BlockToolUse, ID: c.id, Name: c.name, Input: input,
	}})
}

// finish yields the usage and the stop reason at message_stop.
func (d *decoder) finish() error {
	if d.stop != agent.StopMaxTokens {
		for _, c := range d.badCalls {
			if !d.out.Emit(agent.StreamEvent{Kind: agent.EventToolCall, ToolCall: c}) {
				return nil
			}
		}
	}
	if d.stop == "" {
		d.stop = agent.StopEndTurn
	}
	if d.out.Emit(agent.StreamEvent{Kind: agent.EventUsage, Usage: d.usage}) {
		d.out.Emit(agent.StreamEvent{Kind: agent.EventStop, StopReason: d.stop})
	}
	return nil
}
