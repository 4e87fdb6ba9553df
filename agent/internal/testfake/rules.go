package testfake

import (
	"fmt"
	"strings"
)

// The rules below are the ones the real APIs enforce on a request's
// history and answer with a 400; a fake that checks them makes a history
// the real API would refuse fail the test the same way.

// AnthropicRules checks a Messages API request body and returns the
// error body the API would answer with, or "" when it is valid.
func AnthropicRules(body map[string]any) string {
	msgs, _ := body["messages"].([]any)
	if len(msgs) == 0 {
		return anthropicInvalid("messages: at least one message is required")
	}
	tools, _ := body["tools"].([]any)
	var prevCalls []string
	for i, m := range msgs {
		msg, _ := m.(map[string]any)
		role, _ := msg["role"].(string)
		if i == 0 && role != "user" {
			return anthropicInvalid("messages: first message must use the \"user\" role")
		}
		blocks, _ := msg["content"].([]any)
		var calls, results []string
		seenOther := false
		for _, bl := range blocks {
			blk, _ := bl.(map[string]any)
			switch blk["type"] {
			case "text":
				if strings.TrimSpace(fmt.Sprint(blk["text"])) == "" {
					return anthropicInvalid(fmt.Sprintf("messages: text content blocks must contain non-whitespace text (message %d)", i))
				}
				seenOther = true
			case "tool_use":
				calls = append(calls, fmt.Sprint(blk["id"]))
			case "tool_result":
				if seenOther {
					return anthropicInvalid(fmt.Sprintf("messages.%d: tool_result blocks must come before other content", i))
				}
				results = append(results, fmt.Sprint(blk["tool_use_id"]))
			}
		}
		if (len(calls) > 0 || len(results) > 0) && len(tools) == 0 {
			return anthropicInvalid("Requests which include `tool_use` or `tool_result` blocks must define tools.")
		}
		if role == "user" {
			if missing := minus(prevCalls, results); len(missing) > 0 {
				return anthropicInvalid(fmt.Sprintf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s", i-1, strings.Join(missing, ", ")))
			}
			if extra := minus(results, prevCalls); len(extra) > 0 {
				return anthropicInvalid(fmt.Sprintf("messages.%d.content: unexpected `tool_use_id` found in `tool_result` blocks: %s", i, strings.Join(extra, ", ")))
			}
			prevCalls = nil
			continue
		}
		if len(prevCalls) > 0 {
			return anthropicInvalid(fmt.Sprintf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s", i-1, strings.Join(prevCalls, ", ")))
		}
		prevCalls = calls
	}
	return ""
}

// OpenAIRules checks a chat completions request body and returns the
// error body the API would answer with, or "" when it is valid.
func OpenAIRules(body map[string]any) string {
	msgs, _ := body["messages"].([]any)
	var open []string
	for i, m := range msgs {
		msg, _ := m.(map[string]any)
		role, _ := msg["role"].(string)
		if role == "tool" {
			id := fmt.Sprint(msg["tool_call_id"])
			if !contains(open, id) {
				return openaiInvalid(fmt.Sprintf("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'. (messages.[%d])", i))
			}
			open = minus(open, []string{id})
			continue
		}
		if len(open) > 0 {
			return openaiInvalid("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: " + strings.Join(open, ", "))
		}
		if role == "assistant" {
			calls, _ := msg["tool_calls"].([]any)
			for _, c := range calls {
				cm, _ := c.(map[string]any)
				open = append(open, fmt.Sprint(cm["id"]))
			}
		}
	}
	if len(open) > 0 {
		return openaiInvalid("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: " + strings.Join(open, ", "))
	}
	return ""
}

func anthropicInvalid(msg string) string {
	return fmt.Sprintf(`{"type":"error","error":{"type":"invalid_request_error","message":%q}}`, msg)
}

func openaiInvalid(msg string) string {
	return fmt.Sprintf(`{"error":{"message":%q,"type":"invalid_request_error","param":"messages","code":null}}`, msg)
}

func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}
