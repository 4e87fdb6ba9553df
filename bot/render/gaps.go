package render

import "time"

// ObserveGaps has f hear, after each visible update of the answer but
// the first, the time since the one before: how long a person watching
// the thread saw nothing change. f nil observes nothing.
func (r *Renderer) ObserveGaps(f func(time.Duration)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.onGap = f
}

// visible notes that the platform took a change of the answer.
func (r *Renderer) visible() {
	now := time.Now()
	r.mu.Lock()
	f := r.onGap
	r.mu.Unlock()
	if f != nil && !r.lastVisible.IsZero() {
		f(now.Sub(r.lastVisible))
	}
	r.lastVisible = now
}
