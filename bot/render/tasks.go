package render

import (
	"context"
	"errors"

	"github.com/opsbot/opsbot/connectors"
)

// Tasks: where the platform shows task cards in a native stream
// (connectors.TaskUpdater), each command of the answer is a card, updated
// in place as it goes from in progress to complete or error, instead of a
// line in the message's context. The cards go with the next flush, after
// the text: at most an edit interval after the task changed.

// Task shows t as a card in the answer's stream, and reports whether the
// platform shows cards; when not, the caller shows a status line instead.
func (r *Renderer) Task(t connectors.Task) bool {
	if _, ok := r.taskUpdater(); !ok {
		return false
	}
	r.mu.Lock()
	if r.tasks == nil {
		r.tasks = map[string]connectors.Task{}
	}
	if _, ok := r.tasks[t.ID]; !ok {
		r.taskOrder = append(r.taskOrder, t.ID)
	}
	r.tasks[t.ID] = t
	r.taskDirty = append(r.taskDirty, t.ID)
	r.dirty = true
	r.mu.Unlock()
	r.poke()
	return true
}

// taskUpdater is the connector's task cards, when it has them and streams
// natively.
func (r *Renderer) taskUpdater() (connectors.TaskUpdater, bool) {
	tu, ok := r.conn.(connectors.TaskUpdater)
	_, native := r.streamer()
	return tu, ok && native
}

// hasTasks reports whether the answer has task cards to show.
func (r *Renderer) hasTasks() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.taskOrder) > 0
}

// sendTasks shows the tasks that changed since the last flush in the last
// page's stream. A stream the platform ended shows no more cards; a
// failed update is tried again with the next flush.
func (r *Renderer) sendTasks(ctx context.Context) {
	tu, ok := r.taskUpdater()
	if !ok || len(r.pages) == 0 {
		return
	}
	if !r.pages[len(r.pages)-1].streaming {
		r.tasksAsStatus()
		return
	}
	ref := r.pages[len(r.pages)-1].ref
	r.mu.Lock()
	ids := r.taskDirty
	r.taskDirty = nil
	r.mu.Unlock()
	seen := map[string]bool{}
	for i, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		r.mu.Lock()
		t := r.tasks[id]
		r.mu.Unlock()
		err := tu.UpdateTask(ctx, ref, t)
		switch {
		case err == nil:
			r.visible()
		case errors.Is(err, connectors.ErrStreamEnded):
			r.mu.Lock()
			r.taskDirty = append(ids[i:], r.taskDirty...)
			r.mu.Unlock()
			r.tasksAsStatus()
			return
		default:
			r.log.Info("task card not shown; trying again", "channel", r.dest.Channel, "err", err)
			r.mu.Lock()
			r.taskDirty = append(ids[i:], r.taskDirty...)
			r.dirty = true
			r.mu.Unlock()
			return
		}
	}
}

// tasksAsStatus shows the tasks that changed as status lines: the answer
// goes on by edits (its stream ended, or it began as a post), where cards
// cannot show. A task's end replaces its own "running" line.
func (r *Renderer) tasksAsStatus() {
	r.mu.Lock()
	ids := r.taskDirty
	r.taskDirty = nil
	r.mu.Unlock()
	for _, id := range ids {
		r.mu.Lock()
		t := r.tasks[id]
		replace := r.statusTask == id
		r.statusTask = id
		r.mu.Unlock()
		r.setStatus(taskLine(t), replace, false)
	}
}

// taskLine is a task as a status line.
func taskLine(t connectors.Task) string {
	line := t.Title
	switch t.Status {
	case connectors.TaskComplete:
		line = "✓ " + line
	case connectors.TaskError:
		line = "✗ " + line
	default:
		return line + "…"
	}
	if t.Output != "" {
		line += ": " + t.Output
	}
	return line
}

// Feedback has the answer end with feedback buttons for turn, where the
// platform shows them (connectors.Message.Feedback).
func (r *Renderer) Feedback(turn string) {
	r.mu.Lock()
	r.feedback = turn
	r.mu.Unlock()
}

func (r *Renderer) feedbackTurn() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.feedback
}
