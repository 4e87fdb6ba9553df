package web

import "slices"

// The hub's read side: snapshots for the API, each with the seq it was
// taken at, so a client can open a stream from there and miss nothing.

func (h *hub) channelList() ([]channelView, uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]channelView, 0, len(h.channels))
	for _, ch := range h.channels {
		v := channelView{Name: ch, Threads: len(h.chThreads[ch])}
		for _, id := range h.chThreads[ch] {
			v.Seq = max(v.Seq, h.threads[id].seq)
		}
		out = append(out, v)
	}
	return out, h.seq
}

// threadList is a channel's threads, the most recently active first.
func (h *hub) threadList(channel string) ([]threadView, uint64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ids, ok := h.chThreads[channel]
	if !ok {
		return nil, 0, errNoChannel
	}
	out := make([]threadView, 0, len(ids))
	for _, id := range ids {
		t := h.threads[id]
		out = append(out, threadView{ID: id, Channel: channel, Root: h.msgs[id].view(),
			Replies: len(t.ids) - 1, Seq: t.seq, Updated: t.updated})
	}
	slices.SortStableFunc(out, func(a, b threadView) int { return cmpSeq(b.Seq, a.Seq) })
	return out, h.seq, nil
}

// threadMessages is a thread's messages in the order posted.
func (h *hub) threadMessages(id string) ([]messageView, uint64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.threads[id]
	if t == nil {
		return nil, 0, errNoThread
	}
	out := make([]messageView, 0, len(t.ids))
	for _, mid := range t.ids {
		out = append(out, h.msgs[mid].view())
	}
	return out, h.seq, nil
}

func (h *hub) message(id string) (messageView, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.msgs[id]
	if m == nil {
		return messageView{}, errNoMessage
	}
	return m.view(), nil
}
