package agent

import (
	"context"
	"fmt"
	"time"
)

// TurnEventKind is the kind of an event a turn reports to its caller.
type TurnEventKind int

// The kinds of Event.
const (
	// TextDelta: Text is the next piece of the answer.
	TextDelta TurnEventKind = iota + 1
	// ToolStarted: Tool and Summary say what is being run.
	ToolStarted
	// ToolFinished: Summary says how it ended; IsError whether it failed.
	ToolFinished
	// ApprovalPending: Approval describes a command waiting for people.
	ApprovalPending
	// Notice: Text is a status line that is not part of the answer
	// (compaction, a retried call, a job notification injected).
	Notice
	// TurnDone: the turn ended; Usage sums its model calls.
	TurnDone
	// TurnError: Err ended the turn; text already sent stays.
	TurnError
)

// Event is what a turn reports while it runs.
type Event struct {
	Kind     TurnEventKind
	Text     string
	Tool     string
	ToolID   string
	Summary  string
	IsError  bool
	Approval *PendingApproval
	// Limit is the longest the tool may run (ToolStarted), when the tool
	// says (a command's time limit); 0 when it does not.
	Limit time.Duration
	// Runs are the commands a finished tool ran (ToolFinished), for
	// people to see what ran where and how it ended.
	Runs  []CommandRun
	Usage Usage
	Err   error
}

// PendingApproval is a command waiting for people to approve it, as a
// turn reports it (ApprovalPending): the tools convert their guard's
// request into it, so that the loop and its callers need no approvals
// package to read it.
type PendingApproval struct {
	// ID names the approval request.
	ID string
	// Target is where the command would run: a host, or a comma list.
	Target  string
	Command string
	// Reasons say why the policy asks people.
	Reasons   []string
	Requester string
	ExpiresAt time.Time
	// Reattached is set when the request existed already (a turn resumed
	// after a restart): its card was posted then.
	Reattached bool
}

// CommandRun is one command a tool ran on one host.
type CommandRun struct {
	Host     string
	Command  string
	ExitCode int
	Signal   string
	Duration time.Duration
	// Killed: by its deadline or a cancel. Err: it could not run at all.
	Killed bool
	Err    string
	// Output is the end of what it printed (stdout, then stderr).
	Output string
	// Approved: it ran after people approved it, as a command that may
	// change something.
	Approved bool
}

type retryNoticeKey struct{}

// WithRetryNotice returns a context under which a provider calls f before
// it makes a failed call again, with the wait and the reason in words
// ("rate limited by the model API"): a turn then says why it waits.
func WithRetryNotice(ctx context.Context, f func(wait time.Duration, reason string)) context.Context {
	return context.WithValue(ctx, retryNoticeKey{}, f)
}

// RetryNotice returns the function WithRetryNotice put in ctx, or nil.
func RetryNotice(ctx context.Context) func(wait time.Duration, reason string) {
	f, _ := ctx.Value(retryNoticeKey{}).(func(time.Duration, string))
	return f
}

// retryText is the status line of a retried call: "rate limited by the
// model API, retrying in 2 s".
func retryText(wait time.Duration, reason string) string {
	secs := int(wait.Round(time.Second) / time.Second)
	return fmt.Sprintf("%s, retrying in %d s", reason, max(secs, 1))
}
