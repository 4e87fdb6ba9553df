// Package slack is the Slack connector: it receives mentions, thread
// replies, direct messages and button clicks over Socket Mode (or Slack's
// HTTP Events API), acknowledges each before any work, and renders the
// bot's neutral messages as Block Kit — posted, edited, or streamed with
// Slack's native streaming (chat.startStream → appendStream → stopStream) —
// within Slack's per-workspace, per-method rate limits.
package slack
