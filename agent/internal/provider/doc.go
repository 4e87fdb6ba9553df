// Package provider holds what the LLM provider packages (agent/anthropic,
// agent/openai) share besides the retry loop of streamretry: the Config
// and its environment fallbacks, the Options of New (HTTP client, retry
// bounds and waits), the HTTP client's timeout, the shape of Stream, and
// the check of a tool call's input. Each provider names them as its own
// (anthropic.Config, openai.WithSleep…).
package provider
