package connectors

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ActionFeedback is the action id of a click of an answer's feedback
// buttons (Message.Feedback).
const ActionFeedback = "opsbot_feedback"

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
	// Mention is set when the bot was addressed by name (or in a direct
	// message, which is addressed to it). A connector also delivers the
	// messages of threads without a mention, with Mention false: the bot
	// decides by bot.thread_replies whether one is for it (see
	// MentionsOthers).
	Mention bool
	// MentionsOthers is set when the message @mentions someone other than
	// the bot: a person, a group or role, or everyone (@here). Under
	// bot.thread_replies: addressed, a message without Mention in a thread
	// where the bot has a session is for the bot unless MentionsOthers is
	// set: people talk to each other there too. Slack and Discord fill it
	// with MentionsOther; the web chat from its @name syntax.
	MentionsOthers bool
	// Question says the text is a question for the agent, never a chat
	// command, however it begins (`opsbot ask`).
	Question bool
	// ActionID and Value identify a clicked button; Ref is the message it
	// was on.
	ActionID string
	Value    string
	Ref      Ref
	// Respond, when set, answers the clicker alone (an ephemeral reply),
	// e.g. "already decided by bob"; text is as a Message's Text. It is
	// not recorded: an event handled after a restart answers in the
	// thread instead.
	Respond func(ctx context.Context, text string) error `json:"-"`
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

// Risk says how risky what a card asks for is, for a platform that
// colours a card by it (Discord's accent). "" is a card that asks for
// nothing: information.
type Risk string

// The risks of a card: RiskHigh and RiskAsk wait for a decision,
// RiskApproved and RiskClosed are decided.
const (
	RiskInfo     Risk = ""
	RiskAsk      Risk = "ask"
	RiskHigh     Risk = "high"
	RiskApproved Risk = "approved"
	RiskClosed   Risk = "closed"
)

// Field is a labelled value shown in a compact grid.
type Field struct {
	Title string
	Value string
}

// Message is what the bot posts, platform-neutral: text, fields, a small
// context line, and buttons.
//
// Text is CommonMark (fenced code blocks, **bold**, _emphasis_, links);
// each connector converts it to what its platform shows (Slack's mrkdwn
// differs: *bold*, <url|label>). People named in Text are placeholders
// made by Mention, which each connector renders its own way.
type Message struct {
	Text    string
	Fields  []Field
	Context string
	Buttons []Button
	// Feedback names the turn whose answer (or alert summary) this
	// message ends: a platform that can shows feedback buttons under it
	// (Slack's context_actions), whose clicks come as EventAction with
	// ActionID ActionFeedback and Value "good:" or "bad:" and the turn.
	Feedback string `json:",omitempty"`
	// Notify are mentions in the platform's own markup, put at the start
	// of the message so that they are notified: Slack's <@U…>, <@W…>,
	// <!subteam^S…> and <!here>; Discord's <@USERID> and <@&ROLEID>. A
	// connector sends only those of its own platform's shape and lets
	// exactly them ping (Discord's allowed_mentions names them); @everyone
	// is never one. They come from what an operator configured (a health
	// schedule's notify), never from a command's output or a model.
	Notify []string `json:",omitempty"`
	// Broadcast asks that a reply in a thread show in the channel too, as
	// a new message that notifies (Slack's reply_broadcast). Discord
	// cannot broadcast a thread reply: its connector posts the message in
	// the channel instead, naming the thread.
	Broadcast bool `json:",omitempty"`
	// ThreadName names the thread that a message posted at the top of a
	// channel starts, where the platform shows a thread's name (Discord);
	// empty, the connector's default.
	ThreadName string `json:",omitempty"`
	// Risk colours a card of Fields where the platform can (Risk).
	Risk Risk `json:",omitempty"`
	// Tasks are the answer's task cards shown in this message, where the
	// platform shows cards in a message it posts or edits (a
	// TaskMessenger: Slack's task_card blocks, above the text); others
	// ignore them.
	Tasks []Task `json:",omitempty"`
}

// Dest is where a message goes: a thread of a channel in a workspace.
// Recipient is the person a streamed answer answers (Slack's
// chat.startStream needs their user and team); it may be empty for a
// message that answers nobody in particular (a health report).
type Dest struct {
	Platform  string
	Workspace string
	Channel   string
	// Thread is the thread's root id; "" starts a new thread.
	Thread    string
	Recipient User
}

// Ref names a posted message so it can be edited.
type Ref struct {
	Platform  string
	Workspace string
	Channel   string
	Thread    string
	ID        string
}

// Dest is the thread the message is in.
func (r Ref) Dest() Dest {
	return Dest{Platform: r.Platform, Workspace: r.Workspace, Channel: r.Channel, Thread: r.Thread}
}

// Limits are a platform's constraints, which the bot's renderer respects.
type Limits struct {
	// MaxText is the most characters (Unicode code points, as Slack and
	// Discord count them) one message's text may hold.
	MaxText int
	// EditInterval is the least time between two edits of one message.
	EditInterval time.Duration
	// EditsPerMinute is the edit budget shared by every message of one
	// workspace (0: no shared budget).
	EditsPerMinute int
	// MaxButtons is how many buttons one message may carry; the bot puts
	// no more on a message (0: no limit).
	MaxButtons int
	// NativeStreaming says the connector implements Streamer and the
	// platform's streaming should be preferred to edits for answers.
	NativeStreaming bool
	// StreamLifetime is how long a native stream accepts appends after it
	// started (Slack's stops after a few minutes): the renderer ends a
	// stream before then and goes on in a new one. 0: no limit.
	StreamLifetime time.Duration
	// StreamMaxText is the most characters one native stream holds, when
	// more than MaxText (Slack's appends take 12,000): the renderer rolls a
	// stream over by length only near it. 0: MaxText.
	StreamMaxText int
	// StreamEdits says Edit works on a live stream without ending it: its
	// text may be rewritten and its context line changed (the web chat).
	// Without it, a rewrite ends the stream and then edits the message.
	StreamEdits bool
	// KeepsStatus says every context line shown stays in view (a
	// terminal's scrollback): the bot then posts no summary of what an
	// answer ran after it.
	KeepsStatus bool
}

// Streamer is a platform's native streaming of one message (Slack's
// chat.startStream → chat.appendStream → chat.stopStream): appends cost no
// edits of the workspace's budget. The text of a stream only grows; its
// final form, with context and buttons, is set when it stops. A message
// posted with Post is complete; one started with StartStream is being
// written until StopStream.
//
// A stream the platform ended (it outlived its lifetime, or went idle)
// makes AppendStream and StopStream return an error wrapping
// ErrStreamEnded: the message keeps what it showed, and the caller
// finishes it by Edit or a new post.
type Streamer interface {
	// StartStream posts a message that is being written, answering
	// d.Recipient.
	StartStream(ctx context.Context, d Dest, m Message) (Ref, error)
	// AppendStream adds text to the end of the stream's text.
	AppendStream(ctx context.Context, ref Ref, text string) error
	// StopStream ends the stream with its complete form, final.
	StopStream(ctx context.Context, ref Ref, final Message) error
}

// TaskStatus is where a task of an answer stands. The values are
// Slack's (task_update chunks): "complete", not "completed".
type TaskStatus string

// The task statuses, in the order a task goes through them.
const (
	TaskPending    TaskStatus = "pending"
	TaskInProgress TaskStatus = "in_progress"
	TaskComplete   TaskStatus = "complete"
	TaskError      TaskStatus = "error"
)

// Task is one step of an answer shown as a card in its stream: a command,
// an MCP call, a plan step. ID is the same for each update of one task.
type Task struct {
	ID, Title string
	Status    TaskStatus
	// Details says what the task is; Output how it ended (host, exit
	// code, duration).
	Details, Output string
}

// TaskUpdater is a Streamer that shows an answer's tasks in its stream,
// each update replacing the card of the same ID (Slack's task_update
// chunks). Optional: the renderer shows cards only for a TaskMessenger
// (its answers going on by edits keep their cards too); without, it shows
// tool activity in the message's context line, as Discord and the web
// chat do.
type TaskUpdater interface {
	UpdateTask(ctx context.Context, ref Ref, t Task) error
}

// TaskMessenger is a TaskUpdater that also shows task cards in a message
// it posts or edits (Message.Tasks): an answer that goes on by edits
// keeps its cards in its own message, with its words.
type TaskMessenger interface {
	TaskUpdater
	ShowsTasksInMessages() bool
}

// Thinker is a connector that can show, in a thread, that the bot is
// working on an answer before its first word (Slack's
// assistant.threads.setStatus: "is thinking…"); the platform clears it
// when the answer posts. The renderer calls it as an answer starts.
type Thinker interface {
	Thinking(ctx context.Context, d Dest, status string) error
}

// ErrStreamEnded is wrapped by a Streamer's error when the platform no
// longer accepts changes to a stream (Slack: message_not_in_streaming_state).
var ErrStreamEnded = errors.New("the message is no longer streaming")

// Handler receives events. Record, then acknowledge, then act (design
// §1.8). The contract, on both sides:
//   - a connector calls the Handler first, and acknowledges the event to
//     its platform (a Slack envelope, a Discord interaction response, the
//     web chat's 201/202) only after it returned nil: a platform that
//     retries an event nobody acknowledged then never loses one, and a
//     connector whose ack is its answer (web) answers "taken" only for
//     what is on record;
//   - the Handler records the event durably (one fast insert into the
//     bot's inbox, tens of µs) and returns nil: it does no platform I/O
//     and waits for nothing else; the work is done by goroutines it owns,
//     and what a crash or a stop leaves undone is done by the next start,
//     once. A retry of an event already on record also returns nil (it is
//     dropped by its ID). ctx carries values only: the work does not end
//     with it;
//   - when the event could not be recorded — the write failed (a full
//     disk, a read-only database), did not finish within 2 s (a locked or
//     slow disk: a platform's 3 s ack deadline must hold), or the bot is
//     stopping — the Handler returns an error that says why in words a
//     person can read (it wraps ErrNotRecorded; the connector adds what
//     to do), and nothing is acted on. The
//     connector then does not acknowledge the event as taken: Slack's
//     envelope goes unacknowledged (Slack delivers it again), the web API
//     answers 503, a Discord click is answered "press it again". A write
//     that commits after the 2 s is acted on: the platform's retry of it
//     carries the same ID and is dropped, and a second press of a button
//     is the same person's vote, counted once.
type Handler func(ctx context.Context, ev Event) error

// ErrNotRecorded is wrapped by a Handler's error for an event it could
// not put on record: nothing was done with it, and the platform (or the
// person) should send it again.
var ErrNotRecorded = errors.New("opsbot could not record this event")

// Connector is one chat platform.
type Connector interface {
	// Name is the platform's name: "slack", "discord", "web", "console".
	Name() string
	Limits() Limits
	// Start receives events until ctx ends.
	Start(ctx context.Context, h Handler) error
	// Post adds a complete message to d's thread (d.Thread "" starts a
	// new thread).
	Post(ctx context.Context, d Dest, m Message) (Ref, error)
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

// Shown is a posted message and what it shows.
type Shown struct {
	Ref     Ref
	Message Message
}

// ButtonFinder is a Connector that can find, among the newest messages of
// d's thread, the bot's message showing a button (the web chat can). After
// a crash that came between an approval card's post and the bot's record
// of where it is, the bot finds the card there, to show its decision.
type ButtonFinder interface {
	FindButton(ctx context.Context, d Dest, actionID, value string) (ref Ref, ok bool, err error)
}

// UnfinishedLister is a Connector that keeps which of the bot's messages
// are still being written (the web chat does). After a crash that came
// between a post and the bot's record of it, the bot's recovery finds the
// message there, to finish it.
type UnfinishedLister interface {
	// Unfinished lists the bot's messages in d's thread still being
	// written, oldest first.
	Unfinished(ctx context.Context, d Dest) ([]Shown, error)
}
