package web

import (
	"container/list"
	"runtime"
	"sync"
)

// frameCacheBytes bounds the encoded frames the hub keeps for replays.
const frameCacheBytes = 8 << 20

// frameCache keeps the event-stream frames of recent changes, keyed by
// the change's seq, least recently used evicted first. A change's frame
// never changes (every change takes a new seq), so twenty clients
// replaying the same history encode each message once between them
// instead of once each: decoding the stored JSON and encoding the frame
// was most of a replay's CPU (docs/BENCHMARKS.md). It has its own mutex,
// never held with another: a replay's look-ups do not contend with a
// post for the hub's.
type frameCache struct {
	mu          sync.Mutex
	limit, size int
	lru         *list.List // of *cachedFrame, most recent at the front
	bySeq       map[uint64]*list.Element
}

// cachedFrame is one change's frame; last says the change is the bot's
// finished message, which ends a stream opened with until=finished.
type cachedFrame struct {
	seq   uint64
	frame []byte
	last  bool
}

func newFrameCache(limit int) *frameCache {
	return &frameCache{limit: limit, lru: list.New(), bySeq: map[uint64]*list.Element{}}
}

// get returns the frame of the change seq, if kept.
func (c *frameCache) get(seq uint64) (cachedFrame, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.bySeq[seq]
	if e == nil {
		return cachedFrame{}, false
	}
	c.lru.MoveToFront(e)
	return *e.Value.(*cachedFrame), true
}

// put keeps f (its bytes are never changed after), evicting the least
// recently used frames past the limit.
func (c *frameCache) put(f cachedFrame) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.bySeq[f.seq]; e != nil {
		c.lru.MoveToFront(e)
		return
	}
	c.bySeq[f.seq] = c.lru.PushFront(&f)
	c.size += frameCost(f.frame)
	for c.size > c.limit {
		e := c.lru.Back()
		old := e.Value.(*cachedFrame)
		c.size -= frameCost(old.frame)
		c.lru.Remove(e)
		delete(c.bySeq, old.seq)
	}
}

// frameCost is about the memory a kept frame holds.
func frameCost(frame []byte) int { return 96 + cap(frame) }

// frameOf is m's frame for the cache.
func frameOf(m *message, frame []byte) cachedFrame {
	return cachedFrame{seq: m.seq, frame: frame, last: m.bot && m.finished}
}

// replaySlotCount is how many replays may read and frame at once: half
// the processors, at least one, so that a post always finds a processor
// that no replay is keeping busy.
func replaySlotCount() int { return max(1, runtime.GOMAXPROCS(0)/2) }
