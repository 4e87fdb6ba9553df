package web

import "container/list"

// cacheBytes bounds the messages the hub keeps in memory (about their
// text's size): the rest are read from the Archive when asked for.
const cacheBytes = 8 << 20

// msgCache holds recently used messages, least recently used evicted
// first, except the bot's unfinished messages: those are being written
// and stay until finished.
type msgCache struct {
	limit, size int
	lru         *list.List // of *message, most recent at the front
	byID        map[string]*list.Element
}

func newMsgCache(limit int) *msgCache {
	return &msgCache{limit: limit, lru: list.New(), byID: map[string]*list.Element{}}
}

func (c *msgCache) get(id string) *message {
	e := c.byID[id]
	if e == nil {
		return nil
	}
	c.lru.MoveToFront(e)
	return e.Value.(*message)
}

// put adds m or takes its new size after a change, then evicts.
func (c *msgCache) put(m *message) {
	if e := c.byID[m.id]; e != nil {
		old := e.Value.(*message)
		c.size -= old.size
		e.Value = m
		c.lru.MoveToFront(e)
	} else {
		c.byID[m.id] = c.lru.PushFront(m)
	}
	m.size = m.body.size()
	c.size += m.size
	for e := c.lru.Back(); e != nil && c.size > c.limit; {
		prev := e.Prev()
		if old := e.Value.(*message); old.finished || !old.bot {
			c.remove(old.id)
		}
		e = prev
	}
}

func (c *msgCache) remove(id string) {
	if e := c.byID[id]; e != nil {
		c.size -= e.Value.(*message).size
		c.lru.Remove(e)
		delete(c.byID, id)
	}
}

// size is about the memory a message body holds.
func (b body) size() int {
	n := 256 + len(b.Text) + len(b.Context)
	for _, f := range b.Fields {
		n += 32 + len(f.Title) + len(f.Value)
	}
	for _, bt := range b.Buttons {
		n += 64 + len(bt.ActionID) + len(bt.Value) + len(bt.Label)
	}
	return n
}
