// Package testfake holds the test doubles the LLM provider packages
// (agent/anthropic, agent/openai) share: an httptest server that replays
// recorded SSE transcripts and records what it was sent, a recording sleep,
// a stream collector, the key-leak assertion and the benchmark replay.
// Only the wire format differs between providers; callers pass it in.
//
// It imports "testing" and so must only be imported from _test files.
package testfake
