package web

import (
	"bytes"
	"container/list"
	"encoding/json"
	"runtime"
	"strconv"
	"sync"
)

// frameCacheBytes bounds the encoded frames the hub keeps for replays.
const frameCacheBytes = 8 << 20

// frameCache keeps the event-stream frames of recent changes, keyed by
// the change's seq, least recently used evicted first, and only each
// message's latest: a replay sends a message's latest state, so the
// frames of an answer's earlier edits would only take the room. A
// change's frame never changes (every change takes a new seq), so twenty
// clients replaying the same history encode each message once between
// them instead of once each: decoding the stored JSON and encoding the
// frame was most of a replay's CPU (docs/BENCHMARKS.md). It has its own
// mutex, never held with another: a replay's look-ups do not contend
// with a post for the hub's.
type frameCache struct {
	mu          sync.Mutex
	limit, size int
	lru         *list.List // of *cachedFrame, most recent at the front
	bySeq       map[uint64]*list.Element
	byID        map[string]*list.Element
}

// cachedFrame is one change's frame of message id; last says the change
// is the bot's finished message, which ends a stream opened with
// until=finished.
type cachedFrame struct {
	id    string
	seq   uint64
	frame []byte
	last  bool
}

func newFrameCache(limit int) *frameCache {
	return &frameCache{limit: limit, lru: list.New(), bySeq: map[uint64]*list.Element{}, byID: map[string]*list.Element{}}
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

// put keeps f (its bytes are never changed after) in place of its
// message's earlier frame, unless a later one is kept already (a replay
// may read a state a change has just replaced), then evicts the least
// recently used frames past the limit.
func (c *frameCache) put(f cachedFrame) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.byID[f.id]; e != nil {
		if kept := e.Value.(*cachedFrame); kept.seq >= f.seq {
			c.lru.MoveToFront(e)
			return
		}
		c.remove(e)
	}
	e := c.lru.PushFront(&f)
	c.bySeq[f.seq], c.byID[f.id] = e, e
	c.size += frameCost(f.frame)
	for c.size > c.limit {
		c.remove(c.lru.Back())
	}
}

func (c *frameCache) remove(e *list.Element) {
	f := e.Value.(*cachedFrame)
	c.size -= frameCost(f.frame)
	c.lru.Remove(e)
	delete(c.bySeq, f.seq)
	delete(c.byID, f.id)
}

// frameCost is about the memory a kept frame holds.
func frameCost(frame []byte) int { return 96 + cap(frame) }

// frameOf is m's frame for the cache.
func frameOf(m *message, frame []byte) cachedFrame {
	return cachedFrame{id: m.id, seq: m.seq, frame: frame, last: m.bot && m.finished}
}

// replaySlotCount is how many replays may read and frame at once: half
// the processors, at least one, so that a post always finds a processor
// that no replay is keeping busy.
func replaySlotCount() int { return max(1, runtime.GOMAXPROCS(0)/2) }

// storedFrame frames a message read from the Archive without decoding
// its content: the stored JSON is the body exactly as messageView embeds
// it (json.Marshal of the same struct, hub.change), so the frame is the
// message's other fields around it: the same frame, with the same JSON,
// as messageFrame makes of the decoded message
// (TestStoredFrameIsTheEncodedFrame), at a fraction of the cost. Content that does not look like the hub's own
// (or would break the frame: a line break) is not framed here (false).
func storedFrame(s StoredMessage) ([]byte, bool) {
	raw := s.Message
	if !bytes.HasPrefix(raw, []byte(`{"text":"`)) || raw[len(raw)-1] != '}' || bytes.ContainsAny(raw, "\r\n") {
		return nil, false
	}
	created, err1 := s.Created.MarshalJSON()
	updated, err2 := s.Updated.MarshalJSON()
	if err1 != nil || err2 != nil {
		return nil, false
	}
	b := make([]byte, 0, len(raw)+len(s.ID)+len(s.Channel)+len(s.Thread)+len(s.User)+192)
	b = append(strconv.AppendUint(append(b, "id: "...), s.Seq, 10), "\nevent: message\ndata: {\"id\":"...)
	b = appendString(b, s.ID)
	b = appendString(append(b, `,"channel":`...), s.Channel)
	b = appendString(append(b, `,"thread":`...), s.Thread)
	b = appendString(append(b, `,"user":`...), s.User)
	b = strconv.AppendBool(append(b, `,"bot":`...), s.Bot)
	b = append(append(b, ','), raw[1:len(raw)-1]...)
	b = strconv.AppendBool(append(b, `,"finished":`...), s.Finished)
	b = strconv.AppendUint(append(b, `,"seq":`...), s.Seq, 10)
	b = append(append(b, `,"created":`...), created...)
	b = append(append(b, `,"updated":`...), updated...)
	return append(b, "}\n\n"...), true
}

// appendString appends s as encoding/json writes a string field.
func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string: cannot fail
	return append(b, q...)
}
