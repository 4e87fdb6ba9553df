package render

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/opsbot/opsbot/connectors"
)

// Tasks: where the platform shows task cards in a native stream and in
// the messages it posts and edits (connectors.TaskMessenger), each
// command of the answer is a card, updated in place as it goes from in
// progress to complete or error, instead of a line in the message's
// context. The cards go with the next flush, with the text: in a
// stream's appends, or in a message's edit (msgcards.go).

// Task shows t as a card in the answer's stream, and reports whether the
// platform shows cards; when not, the caller shows a status line instead.
// A t without a title keeps the title its card shows.
func (r *Renderer) Task(t connectors.Task) bool {
	if _, ok := r.taskUpdater(); !ok {
		return false
	}
	r.mu.Lock()
	if r.tasks == nil {
		r.tasks = map[string]connectors.Task{}
	}
	if shown, ok := r.tasks[t.ID]; !ok {
		r.taskOrder = append(r.taskOrder, t.ID)
	} else if t.Title == "" {
		t.Title = shown.Title // a card keeps the title it started with
	}
	r.tasks[t.ID] = t
	r.taskDirty = append(r.taskDirty, t.ID)
	if r.waiting && t.Status != connectors.TaskPending {
		// A wait (for this task's approval) is over once it runs or
		// ends: its line goes.
		r.status, r.waiting = r.status[:len(r.status)-1], false
	}
	r.dirty = true
	r.mu.Unlock()
	r.poke()
	if t.Status == connectors.TaskInProgress && len(r.buttons) > 0 {
		time.AfterFunc(stopLineAfter, func() { r.longTask(t.ID) })
	}
	return true
}

// stopLineAfter is how long a task may run as a card alone in an answer
// with buttons: a live stream shows no buttons (Slack's), so a task
// still running then has the answer's Stop shown below the stream, in the
// control message (control.go), with the task's line; the stream goes on.
const stopLineAfter = 5 * time.Second

// longTask has the control message show Stop, with task id's line, when
// the task still runs.
func (r *Renderer) longTask(id string) {
	r.mu.Lock()
	t := r.tasks[id]
	running := t.Status == connectors.TaskInProgress && !r.done
	if running {
		r.longRunning, r.dirty = id, true
	}
	r.mu.Unlock()
	if running {
		r.poke()
	}
}

// TaskShower is a connector that passes task cards on to another (the
// bot's redacting wrapper): it is a connectors.TaskUpdater whatever it
// wraps, and ShowsTasks says whether what it wraps shows them.
type TaskShower interface {
	ShowsTasks() bool
}

// taskUpdater is the connector's task cards, when it has them, streams
// natively, and shows them in the messages it posts and edits too
// (connectors.TaskMessenger): an answer's cards are then always in its
// own messages, whether they stream or go on by edits (msgcards.go).
func (r *Renderer) taskUpdater() (connectors.TaskUpdater, bool) {
	tu, ok := r.conn.(connectors.TaskMessenger)
	if ts, wraps := r.conn.(TaskShower); wraps && !ts.ShowsTasks() {
		ok = false
	}
	_, native := r.streamer()
	return tu, ok && native && tu.ShowsTasksInMessages()
}

// hasTasks reports whether the answer has task cards to show.
func (r *Renderer) hasTasks() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.taskOrder) > 0
}

// isOpening reports whether the placeholder is an empty stream
// (placehold).
func (r *Renderer) isOpening() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.opening
}

// sendTasks shows the tasks that changed since the last flush, each in
// the stream that shows its card (cardPage: a held one, or the last
// page's), then stops the held streams done holding (releaseHeld). A
// stream the platform ended shows no more cards; a failed update is
// tried again with the next flush.
func (r *Renderer) sendTasks(ctx context.Context) {
	tu, ok := r.taskUpdater()
	if !ok || len(r.pages) == 0 {
		return
	}
	defer r.releaseHeld(ctx)
	r.messageCards(ctx) // the cards of a page going on by edits show in them
	r.mu.Lock()
	ids := r.taskDirty
	r.taskDirty = nil
	r.mu.Unlock()
	ids = r.waitForRoom(ctx, ids) // cardlife.go
	// The cards go on their pages' records before they show open, and
	// leave them once shown ended (cards_record.go).
	opening, ending := r.cardPages(ids)
	r.recordCards(ctx, opening, ids)
	defer r.recordCards(ctx, ending, nil)
	// The cards of one stream go in one call where the platform takes
	// several with text (TaskAppender): the page's text not appended
	// yet goes with them (carry), so a flush costs the stream one
	// append whatever it carries.
	ta, batch := r.taskAppender()
	var groups []cardGroup
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		at := r.cardPage(id)
		ref := r.pages[at].ref
		if g := slices.IndexFunc(groups, func(g cardGroup) bool { return g.ref.ID == ref.ID }); batch && g >= 0 {
			groups[g].ids = append(groups[g].ids, id)
			continue
		}
		groups = append(groups, cardGroup{ref: ref, at: at, ids: []string{id}})
	}
	last := len(r.pages) - 1
	if g := slices.IndexFunc(groups, func(g cardGroup) bool { return g.at == last }); batch && g >= 0 && r.nextTurn == last && r.pages[last].streaming {
		// The stream has just had its turn for text (flush): its cards
		// go with its next text, one append instead of two, for the
		// appends' budget is the workspace's and a turn taken out of
		// turn delays every other answer.
		r.retryTasks(groups[g].ids)
		groups = slices.Delete(groups, g, g+1)
	}
	for g, grp := range groups {
		r.mu.Lock()
		tasks := make([]connectors.Task, len(grp.ids))
		for k, id := range grp.ids {
			tasks[k] = r.tasks[id]
		}
		r.mu.Unlock()
		var err error
		if batch {
			text := r.carried(grp.at)
			if err = ta.AppendWithTasks(ctx, grp.ref, text, tasks); err == nil && text != "" {
				p := &r.pages[grp.at]
				p.streamed += text
				r.record(ctx, grp.at, p.streamed)
			}
		} else {
			err = tu.UpdateTask(ctx, grp.ref, tasks[0])
		}
		var rest []string // the cards not shown, tried again
		if err != nil {
			for _, later := range groups[g:] {
				rest = append(rest, later.ids...)
			}
		}
		at := grp.at
		switch {
		case err == nil:
			r.visible()
		case errors.Is(err, connectors.ErrStreamEnded) && at < len(r.pages)-1:
			// A held stream the platform ended: the card goes on in the
			// last one.
			r.pages[at].streaming, r.pages[at].held = false, false
			r.retryTasks(rest)
			return
		case errors.Is(err, connectors.ErrStreamEnded):
			// The last page does not stream (it began as a post, or the
			// platform ended it): it goes on by edits, its cards in them.
			r.pages[at].streaming, r.pages[at].byEdits = false, true
			r.retryTasks(rest)
			r.poke()
			return
		default:
			r.log.Info("task card not shown; trying again", "channel", r.dest.Channel, "err", err)
			r.retryTasks(rest)
			return
		}
	}
}

// cardGroup is the cards sendTasks shows in one stream, page at's
// (cardRef).
type cardGroup struct {
	ref connectors.Ref
	at  int
	ids []string
}

// retryTasks has the next flush show the cards ids again.
func (r *Renderer) retryTasks(ids []string) {
	r.mu.Lock()
	r.taskDirty = append(ids, r.taskDirty...)
	r.dirty = true
	r.mu.Unlock()
}

// TaskAppender is a connector that appends text and task cards to a
// stream in one call (Slack's chat.appendStream takes chunks of both
// kinds): the cards then cost no append of their own.
type TaskAppender interface {
	AppendWithTasks(ctx context.Context, ref connectors.Ref, text string, tasks []connectors.Task) error
}

// taskAppender is the connector's TaskAppender, where it shows cards.
func (r *Renderer) taskAppender() (TaskAppender, bool) {
	ta, ok := r.conn.(TaskAppender)
	_, cards := r.taskUpdater()
	return ta, ok && cards
}

// carry is the text of the answer's last page not appended to its stream
// yet, which the next cards for that page take with them (flush).
type carry struct {
	page int
	text string
}

// carried is the text for page at's stream to take with its cards, and
// forgets it: "" for another page, or none.
func (r *Renderer) carried(at int) string {
	if r.carry == nil || r.carry.page != at || at < 0 || !r.pages[at].streaming {
		return ""
	}
	p := r.pages[at]
	text := r.carry.text
	r.carry = nil
	if !strings.HasPrefix(text, p.streamed) {
		return ""
	}
	return text[len(p.streamed):]
}

// carryText notes the text of the last page, as pages has it, for the
// cards of this flush to take to its stream (carried).
func (r *Renderer) carryText(pages []Segment) {
	r.carry = nil
	// A page after a roll-over with no words yet is not shown (flush).
	if n := len(r.pages); n > 0 && n == len(pages) && r.pages[n-1].streaming && (n == 1 || pages[n-1].Body != "") {
		r.carry = &carry{page: n - 1, text: pages[n-1].String()}
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
		return strings.TrimSuffix(line, "…") + "…"
	}
	if end := cmp.Or(t.Details, t.Output); end != "" {
		line += ": " + end
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
