// Package anthropic is the agent.Provider for Anthropic's Messages API,
// over the official SDK (github.com/anthropics/anthropic-sdk-go/v2). It
// turns the neutral conversation into a streamed Messages call and the
// server-sent events back into agent.StreamEvents, retrying overloads and
// rate limits only while nothing of the response was shown.
package anthropic
