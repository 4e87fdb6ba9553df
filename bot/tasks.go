package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/bot/render"
	"github.com/opsbot/opsbot/connectors"
)

// startedTask is the task card of a tool call that started.
func startedTask(e agent.Event) connectors.Task {
	return connectors.Task{ID: e.ToolID, Title: e.Summary, Status: connectors.TaskInProgress}
}

// pendingTask is the task card of a tool call waiting for people to
// approve its command: the card shows it pending until the call starts
// (its "approved" ToolStarted) or ends.
func pendingTask(e agent.Event) connectors.Task {
	return connectors.Task{ID: e.ToolID, Title: fmt.Sprintf("`%s` on %s", oneLine(e.Approval.Command), e.Approval.Target),
		Details: "waiting for approval", Status: connectors.TaskPending}
}

// finishedTask is the task card of a tool call that ended: its status,
// and for each command it ran the host, exit code and duration. It keeps
// the title the card started with (an empty Title: the renderer keeps
// the card's), whatever the call ran — a denied command ran none, a
// call to a group ran several; only a call that ran one command names
// it with its host.
func finishedTask(e agent.Event) connectors.Task {
	t := connectors.Task{ID: e.ToolID, Status: connectors.TaskComplete, Details: e.Summary}
	if e.IsError {
		t.Status = connectors.TaskError
	}
	if len(e.Runs) == 1 {
		t.Title = fmt.Sprintf("`%s` on %s", oneLine(e.Runs[0].Command), e.Runs[0].Host)
	}
	var out []string
	for _, run := range e.Runs {
		out = append(out, runOutcome(run))
	}
	t.Output = strings.Join(out, "\n")
	return t
}

// runOutcome is one command's line on its card: host · exit code ·
// duration.
func runOutcome(run agent.CommandRun) string {
	end := fmt.Sprintf("exit %d", run.ExitCode)
	switch {
	case run.Err != "":
		end = "did not run"
	case run.Killed:
		end = "killed"
	case run.Signal != "":
		end = "signal " + run.Signal
	}
	return fmt.Sprintf("%s · %s · %s", run.Host, end, run.Duration.Round(100*time.Millisecond))
}

var (
	_ connectors.TaskMessenger = (*redactedConn)(nil)
	_ render.TaskShower        = (*redactedConn)(nil)
	_ render.TaskAppender      = (*redactedConn)(nil)
)

// errNoTasks is UpdateTask's error for a connector that shows no task
// cards (ShowsTasks said so).
var errNoTasks = errors.New("bot: this connector shows no task cards")

// UpdateTask redacts t and shows it as a card in stream ref, unless the
// fence is closed: a command's title and output may hold a secret.
func (c *redactedConn) UpdateTask(ctx context.Context, ref connectors.Ref, t connectors.Task) error {
	if err := c.fence.err(); err != nil {
		return err
	}
	tu, ok := c.Connector.(connectors.TaskUpdater)
	if !ok {
		return errNoTasks
	}
	t.Title, t.Details, t.Output = c.red.String(t.Title), c.red.String(t.Details), c.red.String(t.Output)
	return tu.UpdateTask(ctx, ref, t)
}

// AppendWithTasks redacts text and tasks and appends them to stream ref
// in one call, where the connector behind the redactor can (its cards
// then cost no append of their own); else each card, then the text, by
// calls of their own: a card shown twice is only replaced by itself, so
// a failure half-way is safe to try again.
func (c *redactedConn) AppendWithTasks(ctx context.Context, ref connectors.Ref, text string, tasks []connectors.Task) error {
	if err := c.fence.err(); err != nil {
		return err
	}
	ta, ok := c.Connector.(render.TaskAppender)
	if !ok {
		for _, t := range tasks {
			if err := c.UpdateTask(ctx, ref, t); err != nil {
				return err
			}
		}
		if text == "" {
			return nil
		}
		return c.AppendStream(ctx, ref, text)
	}
	return ta.AppendWithTasks(ctx, ref, c.red.String(text), c.redactTasks(tasks))
}

// redactTasks is tasks with what a person reads of them redacted.
func (c *redactedConn) redactTasks(tasks []connectors.Task) []connectors.Task {
	if len(tasks) == 0 {
		return nil
	}
	shown := make([]connectors.Task, len(tasks))
	for i, t := range tasks {
		t.Title, t.Details, t.Output = c.red.String(t.Title), c.red.String(t.Details), c.red.String(t.Output)
		shown[i] = t
	}
	return shown
}

// ShowsTasksInMessages reports whether the connector behind the redactor
// shows task cards in the messages it posts and edits
// (connectors.TaskMessenger).
func (c *redactedConn) ShowsTasksInMessages() bool {
	tm, ok := c.Connector.(connectors.TaskMessenger)
	return ok && tm.ShowsTasksInMessages()
}

// ShowsTasks reports whether the connector behind the redactor shows task
// cards (render.TaskShower).
func (c *redactedConn) ShowsTasks() bool {
	_, ok := c.Connector.(connectors.TaskUpdater)
	return ok
}
