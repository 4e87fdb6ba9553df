package render

import (
	"context"
	"slices"
	"sync"
	"time"
)

// EditBudget shares one workspace's edit allowance among all the messages
// being streamed there (Slack's chat.update is ~50/min per workspace). It
// hands out edit slots evenly spaced, first come first served: a stream
// that just edited asks again only after its own per-message interval, so
// it queues behind the streams that waited meanwhile, and all streams
// progress in turn instead of racing for tokens.
type EditBudget struct {
	spacing time.Duration // between two slots; 0: no shared limit

	mu      sync.Mutex
	next    time.Time // the earliest free slot
	streams int
	rolls   []time.Time // the streams' booked roll-overs, ascending
}

// NewEditBudget allows perMinute edits a minute; 0 means no shared limit.
// It keeps a margin: slots come at 90% of perMinute, so that no 60-second
// window — which is how platforms count — ever holds more than perMinute.
func NewEditBudget(perMinute int) *EditBudget {
	b := &EditBudget{}
	if rate := perMinute * 9 / 10; perMinute > 0 {
		b.spacing = time.Minute / time.Duration(max(1, rate))
	}
	return b
}

// Join registers a stream; leave unregisters it.
func (b *EditBudget) Join() (leave func()) {
	b.mu.Lock()
	b.streams++
	b.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			b.streams--
			b.mu.Unlock()
		})
	}
}

// Streams is how many streams share the budget now.
func (b *EditBudget) Streams() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.streams
}

// Reserve books the first free slot at or after earliest and returns it.
func (b *EditBudget) Reserve(earliest time.Time) time.Time {
	if b == nil || b.spacing == 0 {
		return earliest
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	slot := earliest
	if b.next.After(slot) {
		slot = b.next
	}
	b.next = slot.Add(b.spacing)
	return slot
}

// Wait books a slot and sleeps until it comes.
func (b *EditBudget) Wait(ctx context.Context) error {
	wait := time.Until(b.Reserve(time.Now()))
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Penalize pushes every later slot past the platform's retry-after, after
// it said to slow down.
func (b *EditBudget) Penalize(retryAfter time.Duration) {
	if b == nil || b.spacing == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if until := time.Now().Add(retryAfter); until.After(b.next) {
		b.next = until
	}
}

// rollSpacing is the least time between two streams' roll-overs in a
// workspace: each costs a start and a stop of Slack's Tier 2 (~20 a
// minute), so roll-overs at most this often leave room for new answers.
const rollSpacing = 3500 * time.Millisecond

// RollSlot books when a native stream started at started, on a platform
// that ends streams after lifetime, rolls over: the first moment from half
// its lifetime on that is rollSpacing away from every other stream's, so
// that streams that started together roll over one after another. It
// never books past four fifths of the lifetime (a margin for the requests
// in flight). The zero time when streams have no lifetime.
func (b *EditBudget) RollSlot(started time.Time, lifetime time.Duration) time.Time {
	if lifetime <= 0 {
		return time.Time{}
	}
	slot, latest := started.Add(lifetime/2), started.Add(lifetime*4/5)
	if b == nil {
		return latest
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.rolls = slices.DeleteFunc(b.rolls, func(t time.Time) bool { return t.Before(started) })
	for _, t := range b.rolls { // ascending
		if t.After(slot.Add(-rollSpacing)) && t.Before(slot.Add(rollSpacing)) {
			slot = t.Add(rollSpacing)
		}
	}
	slot = minTime(slot, latest)
	i, _ := slices.BinarySearchFunc(b.rolls, slot, time.Time.Compare)
	b.rolls = slices.Insert(b.rolls, i, slot)
	return slot
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
