// Package testfake holds the test doubles the agent's packages share. For
// the LLM provider packages (agent/anthropic, agent/openai): an httptest
// server that replays recorded SSE transcripts and records what it was
// sent, a recording sleep, a stream collector, the key-leak assertion and
// the benchmark replay; only the wire format differs between providers,
// and callers pass it in. For the loop and its tools (agent, agent/tools):
// a scripted Model below the wire formats, fake tools, a Recorder of a
// turn's events and a real SQLite session.
//
// It imports "testing" and so must only be imported from _test files.
package testfake
