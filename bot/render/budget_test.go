package render

import (
	"testing"
	"time"
)

// Streams that start together roll over one after another, rollSpacing
// apart, from half their lifetime on, and never past four fifths of it.
func TestRollSlotsAreStaggered(t *testing.T) {
	b := NewEditBudget(50)
	start := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	life := 4*time.Minute + 30*time.Second
	var prev time.Time
	for i := range 30 {
		slot := b.RollSlot(start, life)
		if slot.Before(start.Add(life/2)) || slot.After(start.Add(life*4/5)) {
			t.Fatalf("stream %d rolls over at %s after its start; want between %s and %s", i, slot.Sub(start), life/2, life*4/5)
		}
		if i > 0 && slot.Sub(prev) < rollSpacing && slot != start.Add(life*4/5) {
			t.Errorf("stream %d rolls over %s after the one before; want at least %s", i, slot.Sub(prev), rollSpacing)
		}
		prev = slot
	}
	if got := b.RollSlot(start, 0); !got.IsZero() {
		t.Errorf("a stream without a lifetime rolls over at %s; want never", got)
	}
}
