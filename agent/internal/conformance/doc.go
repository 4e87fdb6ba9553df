// Package conformance is the test table every LLM provider package
// (agent/anthropic, agent/openai) passes against its fake of the API:
// streaming text and tool calls, retries and their waits, cuts, cancels,
// the caller stopping, malformed tool input, and errors that never carry
// the key. A provider's tests describe its wire (Wire: fixtures, call ids,
// its error wording) and call the suite; only what one wire alone has
// stays in its own tests, run through the same Run.
//
// It imports "testing" and so must only be imported from _test files.
package conformance
