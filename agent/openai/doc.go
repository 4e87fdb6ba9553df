// Package openai is the agent.Provider for OpenAI-compatible chat
// completions (OpenAI, DeepSeek, Ollama, vLLM: any server chosen by base
// URL), over the official SDK (github.com/openai/openai-go/v3). It turns
// the neutral conversation, where tool results are blocks of a user
// message, into chat messages (assistant tool_calls, one "tool" message per
// result), and the streamed chunks back into agent.StreamEvents, with tool
// calls accumulated by index across chunks.
package openai
