package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/provider"
)

// params translates a neutral request into the SDK's, filling the model
// and the token bound from the provider's config when the request has none.
func (p *Provider) params(req agent.Request) (sdk.MessageNewParams, error) {
	msgs, err := messages(req.Messages, messageMarks(req.CacheMarks))
	if err != nil {
		return sdk.MessageNewParams{}, err
	}
	tools, err := tools(req.Tools)
	if err != nil {
		return sdk.MessageNewParams{}, err
	}
	if len(tools) > 0 {
		// The tools come first in the prefix: a change of the system
		// prompt (a host added) still finds them cached.
		*tools[len(tools)-1].GetCacheControl() = sdk.NewCacheControlEphemeralParam()
	}
	params := sdk.MessageNewParams{
		Model:     cmp(req.Model, p.model),
		MaxTokens: int64(p.maxTokens),
		Messages:  msgs,
	}
	if len(tools) > 0 {
		// No "tools": [] in a request that offers none (a summary).
		params.Tools = tools
	}
	if req.MaxTokens > 0 {
		params.MaxTokens = int64(req.MaxTokens)
	}
	params.System = system(req.System, req.CachePrefix)
	if req.NoToolUse && len(tools) > 0 {
		params.ToolChoice = sdk.ToolChoiceUnionParam{OfNone: &sdk.ToolChoiceNoneParam{}}
	}
	return params, nil
}

// maxBreakpoints is how many cache_control marks the Messages API takes in
// one request: the tools, the system prompt, and two in the history.
const maxBreakpoints = 4

// messageMarks are the history blocks to mark: the last ones the request
// names, as many as the breakpoints the tools and the system prompt leave.
func messageMarks(refs []agent.BlockRef) map[agent.BlockRef]bool {
	refs = refs[max(0, len(refs)-(maxBreakpoints-2)):]
	marks := make(map[agent.BlockRef]bool, len(refs))
	for _, r := range refs {
		marks[r] = true
	}
	return marks
}

// system is the system prompt as blocks: the stable prefix, marked for
// prompt caching so that a long investigation does not pay for it on
// every step, then the rest (the time, which changes).
func system(text string, prefix int) []sdk.TextBlockParam {
	if text == "" {
		return nil
	}
	if prefix <= 0 || prefix > len(text) {
		return []sdk.TextBlockParam{{Text: text}}
	}
	blocks := []sdk.TextBlockParam{{Text: text[:prefix], CacheControl: sdk.NewCacheControlEphemeralParam()}}
	if rest := text[prefix:]; strings.TrimSpace(rest) != "" {
		blocks = append(blocks, sdk.TextBlockParam{Text: rest})
	}
	return blocks
}

// cmp returns a, or b when a is empty.
func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// messages translates the history. Both sides model tool results the same
// way (blocks of a user message), so this is one block for one block. A
// block in marks is marked for prompt caching; when it is one the API
// would refuse and is dropped, the block before it in its message is.
func messages(in []agent.Message, marks map[agent.BlockRef]bool) ([]sdk.MessageParam, error) {
	out := make([]sdk.MessageParam, 0, len(in))
	for i, m := range in {
		blocks := make([]sdk.ContentBlockParamUnion, 0, len(m.Content))
		for j, b := range m.Content {
			cb, ok, err := block(b)
			if err != nil {
				return nil, fmt.Errorf("anthropic: message %d: %w", i, err)
			}
			if ok {
				blocks = append(blocks, cb)
			}
			if marks[agent.BlockRef{Message: i, Block: j}] && len(blocks) > 0 {
				*blocks[len(blocks)-1].GetCacheControl() = sdk.NewCacheControlEphemeralParam()
			}
		}
		switch m.Role {
		case agent.RoleUser:
			out = append(out, sdk.NewUserMessage(blocks...))
		case agent.RoleAssistant:
			out = append(out, sdk.NewAssistantMessage(blocks...))
		default:
			return nil, fmt.Errorf("anthropic: message %d has unknown role %q", i, m.Role)
		}
	}
	return out, nil
}

// block translates one content block; ok is false for a block the API
// would refuse and that carries nothing (an empty or blank text).
func block(b agent.Block) (cb sdk.ContentBlockParamUnion, ok bool, err error) {
	switch b.Type {
	case agent.BlockText:
		if strings.TrimSpace(b.Text) == "" {
			return cb, false, nil
		}
		return sdk.NewTextBlock(b.Text), true, nil
	case agent.BlockToolUse:
		input, err := provider.ObjectJSON(b.Input)
		if err != nil {
			return cb, false, fmt.Errorf("tool call %s (%s): %w", b.ID, b.Name, err)
		}
		return sdk.NewToolUseBlock(b.ID, input, b.Name), true, nil
	case agent.BlockToolResult:
		r := sdk.ToolResultBlockParam{ToolUseID: b.ToolUseID}
		if b.Content != "" {
			r.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: b.Content}}}
		}
		if b.IsError {
			r.IsError = sdk.Bool(true)
		}
		return sdk.ContentBlockParamUnion{OfToolResult: &r}, true, nil
	default:
		return cb, false, fmt.Errorf("unknown block type %q", b.Type)
	}
}

// tools translates the tool specs, passing each JSON schema through as is.
func tools(in []agent.ToolSpec) ([]sdk.ToolUnionParam, error) {
	out := make([]sdk.ToolUnionParam, 0, len(in))
	for _, t := range in {
		schema, err := provider.ObjectJSON(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("anthropic: tool %s: input schema: %w", t.Name, err)
		}
		if string(schema) == "{}" {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		tp := &sdk.ToolParam{
			Name:        t.Name,
			InputSchema: param.Override[sdk.ToolInputSchemaParam](schema),
		}
		if t.Description != "" {
			tp.Description = sdk.String(t.Description)
		}
		out = append(out, sdk.ToolUnionParam{OfTool: tp})
	}
	return out, nil
}
