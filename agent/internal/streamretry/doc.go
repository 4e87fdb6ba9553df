// Package streamretry makes the streamed call of an LLM provider again
// while that is safe: only before any event of the response reached the
// caller, at most a bounded number of times, waiting as the server asks
// (retry-after-ms, retry-after) or 1s, 2s, 4s, … up to 16s. Each provider
// supplies a Policy saying which of its failures are worth another call and
// where the server's response header is; the loop, the waits and the
// wording of failures no server reported are the same for all of them.
package streamretry
