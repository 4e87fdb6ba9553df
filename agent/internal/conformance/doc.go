// Package conformance is the test table every LLM provider package
// (agent/anthropic, agent/openai) passes against its fake of the API:
// streaming text and tool calls, retries and their waits, cuts, cancels,
// the caller stopping, malformed tool input, and errors that never carry
// the key. A provider's tests describe its wire (Wire: fixtures, call ids,
// its error wording) and call the suite; only what one wire alone has
// stays in its own tests, run through the same Run.
//
// It takes its tests as T, which the standard test type satisfies, so it
// does not import the standard test package; it is still for _test files
// only.
package conformance

import "github.com/opsbot/opsbot/agent/internal/testfake"

// T is what the suite needs of a test: the standard test type is one,
// with S itself. Through it the suite runs subtests without importing the
// standard test package.
type T[S any] interface {
	testfake.T
	Parallel()
	Setenv(key, value string)
	Run(name string, f func(S)) bool
}
