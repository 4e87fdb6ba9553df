package openai

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/provider"
)

// params translates a neutral request into the SDK's, filling the model
// and the token bound from the provider's config when the request has none.
func (p *Provider) params(req agent.Request) (sdk.ChatCompletionNewParams, error) {
	msgs, err := messages(req.System, req.Messages)
	if err != nil {
		return sdk.ChatCompletionNewParams{}, err
	}
	tools, err := tools(req.Tools)
	if err != nil {
		return sdk.ChatCompletionNewParams{}, err
	}
	params := sdk.ChatCompletionNewParams{Model: cmp(req.Model, p.model), Messages: msgs}
	if len(tools) > 0 {
		// OpenAI refuses "tools": [] in a request that offers none.
		params.Tools = tools
	}
	if limit := int64(cmpInt(req.MaxTokens, p.maxTokens)); limit > 0 {
		if p.official {
			params.MaxCompletionTokens = sdk.Int(limit)
		} else {
			params.MaxTokens = sdk.Int(limit)
		}
	}
	if req.NoToolUse && len(tools) > 0 {
		params.ToolChoice = sdk.ChatCompletionToolChoiceOptionUnionParam{OfAuto: sdk.String("none")}
	}
	if p.opts.StreamUsage {
		params.StreamOptions.IncludeUsage = sdk.Bool(true)
	}
	return params, nil
}

// cmpInt returns a, or b when a is not positive.
func cmpInt(a, b int) int {
	if a > 0 {
		return a
	}
	return b
}

// messages translates the history. The neutral model keeps tool results in
// user messages, Anthropic style; chat completions wants one "tool"
// message per result, right after the assistant message that asked, so a
// user message becomes its tool messages first, then a user message with
// any text it held.
func messages(system string, in []agent.Message) ([]sdk.ChatCompletionMessageParamUnion, error) {
	out := make([]sdk.ChatCompletionMessageParamUnion, 0, len(in)+1)
	if system != "" {
		out = append(out, sdk.SystemMessage(system))
	}
	for i, m := range in {
		var err error
		switch m.Role {
		case agent.RoleUser:
			out, err = appendUser(out, m.Content)
		case agent.RoleAssistant:
			out, err = appendAssistant(out, m.Content)
		default:
			err = fmt.Errorf("unknown role %q", m.Role)
		}
		if err != nil {
			return nil, fmt.Errorf("openai: message %d: %w", i, err)
		}
	}
	return out, nil
}

// appendUser adds a user message's tool results and text.
func appendUser(out []sdk.ChatCompletionMessageParamUnion, blocks []agent.Block) ([]sdk.ChatCompletionMessageParamUnion, error) {
	var texts []string
	for _, b := range blocks {
		switch b.Type {
		case agent.BlockToolResult:
			out = append(out, sdk.ToolMessage(resultText(b), b.ToolUseID))
		case agent.BlockText:
			if b.Text != "" {
				texts = append(texts, b.Text)
			}
		default:
			return nil, fmt.Errorf("block type %q in a user message", b.Type)
		}
	}
	if len(texts) > 0 {
		out = append(out, sdk.UserMessage(strings.Join(texts, "\n\n")))
	}
	return out, nil
}

// resultText is a tool result as the model reads it. Chat completions has
// no error flag, so a failure says so in words.
func resultText(b agent.Block) string {
	text := b.Content
	if text == "" {
		text = "(no output)"
	}
	if b.IsError {
		return "error: " + text
	}
	return text
}

// appendAssistant adds an assistant message: its text as content, its
// tool_use blocks as tool_calls.
func appendAssistant(out []sdk.ChatCompletionMessageParamUnion, blocks []agent.Block) ([]sdk.ChatCompletionMessageParamUnion, error) {
	var a sdk.ChatCompletionAssistantMessageParam
	var texts []string
	for _, b := range blocks {
		switch b.Type {
		case agent.BlockText:
			if b.Text != "" {
				texts = append(texts, b.Text)
			}
		case agent.BlockToolUse:
			input, err := provider.ObjectJSON(b.Input)
			if err != nil {
				return nil, fmt.Errorf("tool call %s (%s): %w", b.ID, b.Name, err)
			}
			a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
					ID:       b.ID,
					Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: b.Name, Arguments: string(input)},
				},
			})
		default:
			return nil, fmt.Errorf("block type %q in an assistant message", b.Type)
		}
	}
	if len(texts) > 0 {
		a.Content.OfString = sdk.String(strings.Join(texts, "\n\n"))
	}
	return append(out, sdk.ChatCompletionMessageParamUnion{OfAssistant: &a}), nil
}

// tools translates the tool specs into function tools.
func tools(in []agent.ToolSpec) ([]sdk.ChatCompletionToolUnionParam, error) {
	out := make([]sdk.ChatCompletionToolUnionParam, 0, len(in))
	for _, t := range in {
		raw, err := provider.ObjectJSON(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("openai: tool %s: input schema: %w", t.Name, err)
		}
		var schema shared.FunctionParameters
		if err := json.Unmarshal(raw, &schema); err != nil {
			return nil, fmt.Errorf("openai: tool %s: input schema: %w", t.Name, err)
		}
		if len(schema) == 0 {
			schema = shared.FunctionParameters{"type": "object", "properties": map[string]any{}}
		}
		fn := shared.FunctionDefinitionParam{Name: t.Name, Parameters: schema}
		if t.Description != "" {
			fn.Description = sdk.String(t.Description)
		}
		out = append(out, sdk.ChatCompletionFunctionTool(fn))
	}
	return out, nil
}
