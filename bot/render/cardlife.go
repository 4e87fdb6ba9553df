package render

import (
	"context"
	"time"
)

// A card's life: a stream the platform ends after its lifetime
// (Limits.StreamLifetime) can no longer change its cards, so a card
// started there late would have to go on in its message's edits once the
// stream stops (hold.go's keepCards), an edit more. A new card therefore
// starts only in a stream with life left for its task: when the stream
// its card would go to has less, the answer's text stream rolls over at
// once (roll.go), and the card waits for the new one and shows there from
// its start to its end.
//
// What bounds one task's run is the command's own time limit (the agent's
// run_command: one minute unless the model asks for more, up to ten; its
// turn: ten minutes) and an MCP call's (thirty seconds by default). The
// longest of those outlives any stream, so no stream can promise a card
// its whole run: a card asks for the life a stream that rolls over on
// schedule has left at its roll-over (half its lifetime), or its task's
// limit when the bot gave a shorter one (TaskLimit). A task longer than
// that may still outlive its card's stream: see keepCards.

// TaskLimit tells the renderer the longest the task it shows next may
// run (a command's time limit: the bot calls it as each command starts,
// bot/turns.go). When shorter than half a stream's lifetime, the card
// then needs only that much life left in its stream, and streams are
// renewed less often.
func (r *Renderer) TaskLimit(d time.Duration) {
	r.mu.Lock()
	r.taskLimit = d
	r.mu.Unlock()
}

// cardLife is the life a stream must have left for a new card; 0 when
// streams have no lifetime.
func (r *Renderer) cardLife() time.Duration {
	life := r.limits.StreamLifetime / 2
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.taskLimit > 0 && r.taskLimit < life {
		life = r.taskLimit
	}
	return life
}

// lifeLeft reports whether a stream started at started has life left for
// a new card before it must stop (holdUntil).
func (r *Renderer) lifeLeft(p page) bool {
	need := r.cardLife()
	return need <= 0 || !time.Now().Add(need).After(r.holdUntil(p))
}

// newCards are the ids, among ids, of tasks still open whose card shows
// in no stream yet.
func (r *Renderer) newCards(ids []string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var fresh []string
	for _, id := range ids {
		_, inPage := r.taskPage[id]
		if t := r.tasks[id]; !inPage && taskOpen(t) {
			fresh = append(fresh, id)
		}
	}
	return fresh
}

// waitForRoom takes out of ids the new cards that would start in the
// answer's streaming last page when it has too little life left for
// them: the page rolls over now, and they wait for the stream that takes
// over. It returns the ids to send now.
func (r *Renderer) waitForRoom(ctx context.Context, ids []string) []string {
	n := len(r.pages)
	r.mu.Lock()
	done := r.done
	r.mu.Unlock()
	if n == 0 || !r.pages[n-1].streaming || done {
		return ids // an answer that has ended stops its streams now: no card outlives them
	}
	if r.rolling == nil && r.lifeLeft(r.pages[n-1]) {
		return ids
	}
	fresh := r.newCards(ids)
	if len(fresh) == 0 {
		return ids
	}
	r.roll(ctx) // no-op while one is under way
	wait := map[string]bool{}
	for _, id := range fresh {
		wait[id] = true
	}
	var now, later []string
	for _, id := range ids {
		if wait[id] {
			later = append(later, id)
		} else {
			now = append(now, id)
		}
	}
	r.mu.Lock()
	r.taskDirty = append(later, r.taskDirty...)
	r.dirty = true
	r.mu.Unlock()
	return now
}
