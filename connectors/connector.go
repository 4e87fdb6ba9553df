package connectors

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// EventKind tells a message from a button click.
type EventKind int

// The kinds of Event.
const (
	// EventMessage is a message in a thread: a mention of the bot, or a
	// message in a thread the bot is part of.
	EventMessage EventKind = iota + 1
	// EventAction is a button click: ActionID and Value say which.
	EventAction
)

// User is who did something, as the platform names them.
type User struct {
	ID   string
	Name string
	// Groups are the user's group or role ids where the platform has them
	// (Slack user groups, Discord roles), for approver rules.
	Groups []string
}

// Event is something that happened on a platform, made neutral.
type Event struct {
	// ID is the platform's id of the event, for dedup of retries; may be
	// empty where the platform does not retry.
	ID        string
	Kind      EventKind
	Platform  string
	Workspace string
	Channel   string
	// Thread is the thread's root id; for a message that starts a thread
	// it is the message's own id.
	Thread string
	User   User
	// Text is the message text with the bot's mention removed.
	Text string
	// Mention is set when the bot was addressed by name.
	Mention bool
	// ActionID and Value identify a clicked button; Ref is the message it
	// was on.
	ActionID string
	Value    string
	Ref      Ref
	// Respond, when set, answers the clicker alone (an ephemeral reply),
	// e.g. "already decided by bob".
	Respond func(ctx context.Context, text string) error
}

// ButtonStyle colours a button.
type ButtonStyle string

// The button styles every platform can show.
const (
	StyleDefault ButtonStyle = ""
	StylePrimary ButtonStyle = "primary"
	StyleDanger  ButtonStyle = "danger"
)

// Button is a clickable action. ActionID says what it does, Value on what.
type Button struct {
	ActionID string
	Value    string
	Label    string
	Style    ButtonStyle
}

// Field is a labelled value shown in a compact grid.
type Field struct {
	Title string
	Value string
}

// Message is what the bot posts, platform-neutral: markdown text (which may
// hold fenced code blocks), fields, a small context line, and buttons.
type Message struct {
	Text    string
	Fields  []Field
	Context string
	Buttons []Button
}

// Ref names a posted message so it can be edited.
type Ref struct {
	Platform string
	Channel  string
	Thread   string
	ID       string
}

// Limits are a platform's constraints, which the bot's renderer respects.
type Limits struct {
	// MaxText is the longest text one message may hold.
	MaxText int
	// EditInterval is the least time between two edits of one message.
	EditInterval time.Duration
	// EditsPerMinute is the edit budget shared by every message of one
	// workspace (0: no shared budget).
	EditsPerMinute int
	// MaxButtons is how many buttons one message may carry.
	MaxButtons int
	// NativeStreaming says the connector implements Streamer and the
	// platform's streaming should be preferred to edits for answers.
	NativeStreaming bool
}

// Streamer is a platform's native streaming of one message (Slack's
// chat.startStream → chat.appendStream → chat.stopStream): appends cost no
// edits of the workspace's budget. The text of a stream only grows; its
// final form, with context and buttons, is set when it stops.
type Streamer interface {
	StartStream(ctx context.Context, channel, thread string, m Message) (Ref, error)
	AppendStream(ctx context.Context, ref Ref, text string) error
	StopStream(ctx context.Context, ref Ref, final Message) error
}

// Handler receives events. It must return quickly: platforms want an
// acknowledgement within seconds, so long work goes to another goroutine.
type Handler func(ctx context.Context, ev Event)

// Connector is one chat platform.
type Connector interface {
	// Name is the platform's name: "slack", "discord", "web", "console".
	Name() string
	Limits() Limits
	// Start receives events until ctx ends.
	Start(ctx context.Context, h Handler) error
	// Post adds a message to a thread (thread "" starts a new one).
	Post(ctx context.Context, channel, thread string, m Message) (Ref, error)
	// Edit replaces a posted message.
	Edit(ctx context.Context, ref Ref, m Message) error
}

// RateLimitError is returned by Post or Edit when the platform asked to
// slow down; the caller waits RetryAfter before the next request.
type RateLimitError struct {
	RetryAfter time.Duration
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("rate limited: retry after %s", e.RetryAfter)
}

// RetryAfter returns how long to wait when err is a rate limit.
func RetryAfter(err error) (time.Duration, bool) {
	var rl *RateLimitError
	if errors.As(err, &rl) {
		return rl.RetryAfter, true
	}
	return 0, false
}
