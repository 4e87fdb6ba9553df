package render

import "time"

// placeholderAfter is how long an answer with buttons (a Stop) may show
// nothing before a line saying it is being worked on posts with them: a
// model whose first word is slow (its API's headers stalled, a long
// think) still leaves people a way to stop it.
const placeholderAfter = 2 * time.Second

// PlaceholderLine is the line shown until the answer's first word or
// status line.
const PlaceholderLine = "working on it…"

// placeholderDue fires once when an answer with buttons may need its
// placeholder; it is nil for an answer without buttons.
func (r *Renderer) placeholderDue() <-chan time.Time {
	if len(r.buttons) == 0 {
		return nil
	}
	return time.After(placeholderAfter)
}

// placehold shows the placeholder line when nothing is shown yet. It is a
// wait: the next status line replaces it, and the answer's first words,
// or its end, take it away.
//
// Where task cards show in a native stream (Slack's), the placeholder is
// that stream, opened empty, instead of a posted line: a message posted
// first could never show cards (a stream is a message of its own), so a
// slow model's commands would show as status lines. The platform shows
// the stream as being written (and its own stop control), and the
// answer's Stop shows when it stops, as for a quick answer's stream.
func (r *Renderer) placehold() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.text.Len() > 0 || len(r.status) > 0 || r.done {
		return
	}
	if _, ok := r.taskUpdater(); ok {
		r.opening, r.dirty = true, true
		return
	}
	r.status, r.waiting, r.placeholding, r.dirty = []string{PlaceholderLine}, true, true, true
}

// unplaceholdLocked takes the placeholder line away; r.mu is held.
func (r *Renderer) unplaceholdLocked() {
	if r.placeholding {
		r.status, r.waiting, r.placeholding = nil, false, false
	}
}
