package render

import (
	"context"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/store"
)

// The control message: where task cards show in a native stream that
// shows no context line and no buttons until it stops (Slack's), the
// answer's status line and Stop go in a small message of their own,
// posted in the thread below the stream, instead of stopping the stream
// to show them. The stream goes on, so every card in it ends with its
// task's true status. The control message is posted once the answer has
// a status line (a wait for approval, a notice) or a task has run
// stopLineAfter; it is edited as the line changes, and once the answer
// ends it is edited to say so, without Stop (the platform has no delete
// here). It is recorded like a page while it shows Stop: a restart's
// recovery ends it with the note that the answer was cut, so no dead
// Stop stays behind.

// controlEnded is the control message's line once the answer has ended.
const controlEnded = "the answer above has ended"

// controlled reports whether page i's status line and buttons go on the
// control message: the answer has task cards (or its placeholder is the
// stream where they will show), in a native stream the platform cannot
// edit while it streams, and page i is (or starts as) that stream. An
// answer without cards (a chat `run`) shows its line and Stop on the
// message itself, as before.
func (r *Renderer) controlled(i int) bool {
	if _, ok := r.taskUpdater(); !ok || r.limits.StreamEdits || !(r.hasTasks() || r.isOpening()) {
		return false
	}
	return i >= len(r.pages) || r.pages[i].streaming
}

// controlLine is what the control message shows while the answer goes
// on, or "" when it needs none yet: the status line, else the line of a
// task that has run long (longTask).
func (r *Renderer) controlLine(status string) string {
	if status != "" {
		return status
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.longRunning == "" {
		return ""
	}
	if t, ok := r.tasks[r.longRunning]; ok && t.Status == connectors.TaskInProgress {
		return taskLine(t)
	}
	return PlaceholderLine
}

// showControl brings the control message up to date with line: posted
// (with the buttons) once there is a line, edited as it changes. It
// reports false when the platform did not take the change; the next
// flush tries again.
func (r *Renderer) showControl(ctx context.Context, line string) bool {
	if line == "" && r.control == nil {
		return true
	}
	msg := connectors.Message{Context: line, Buttons: r.buttons}
	if line == "" {
		msg.Context = PlaceholderLine
	}
	return r.sendControl(ctx, msg)
}

// endControl edits the control message, when there is one, to say the
// answer has ended, without its buttons, and closes its record.
func (r *Renderer) endControl(ctx context.Context) {
	if r.control == nil || r.control.shown == pageKey(connectors.Message{Context: controlEnded}) {
		return
	}
	if r.sendControl(ctx, connectors.Message{Context: controlEnded}) {
		r.unreserve(ctx, r.control.recordID)
	}
}

// sendControl posts or edits the control message to show msg.
func (r *Renderer) sendControl(ctx context.Context, msg connectors.Message) bool {
	key := pageKey(msg)
	if r.control != nil && r.control.shown == key {
		return true
	}
	if r.control == nil {
		rid := r.reserve(ctx, r.redactLine(msg.Context))
		ref, err := r.conn.Post(ctx, r.dest, msg)
		if err != nil {
			r.unreserve(ctx, rid)
			r.log.Info("the answer's Stop not shown; trying again", "channel", r.dest.Channel, "err", err)
			return false
		}
		r.control = &page{ref: ref, recordID: rid, shown: key}
		r.recordControl(ctx, msg.Context)
		return true
	}
	if err := r.budget.Wait(ctx); err != nil {
		return false
	}
	if err := r.conn.Edit(ctx, r.control.ref, msg); err != nil {
		r.log.Info("the answer's Stop not updated; trying again", "channel", r.dest.Channel, "err", err)
		return false
	}
	r.control.shown = key
	r.recordControl(ctx, msg.Context)
	return true
}

// redactLine is line as the redacting connector shows it: the record of
// the control message is shown as it stands after a crash.
func (r *Renderer) redactLine(line string) string {
	if r.red == nil {
		return line
	}
	return r.red.String(line)
}

// recordControl keeps the control message's line on record, as recovery
// would end it: its text is the line it shows (redacted).
func (r *Renderer) recordControl(ctx context.Context, line string) {
	if r.rec == nil {
		return
	}
	line = r.redactLine(line)
	c := r.control
	switch {
	case c.recordID == 0:
		m, err := r.rec.RecordStreaming(ctx, store.PostedMessage{Platform: r.conn.Name(), Channel: r.dest.Channel, Thread: r.dest.Thread, MessageID: c.ref.ID, Text: line})
		if err == nil {
			c.recordID, c.posted = m.ID, true
		}
	case !c.posted:
		if err := r.rec.PostedStreaming(ctx, c.recordID, c.ref.ID, line); err == nil {
			c.posted = true
		}
	default:
		r.rec.UpdateStreamingText(ctx, c.recordID, line)
	}
}

// updateControl brings the control message in line with the answer after
// a flush: it shows the status line and Stop while the answer streams,
// and says the answer ended once it has (or once the answer goes on by
// edits, where its last page shows them itself).
func (r *Renderer) updateControl(ctx context.Context, status string, done bool) {
	if !done && r.controlled(max(len(r.pages)-1, 0)) {
		r.showControl(ctx, r.controlLine(status))
		return
	}
	r.endControl(ctx)
}
