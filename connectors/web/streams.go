package web

import (
	"encoding/json"
	"fmt"
	"slices"
)

// streamBuffer is how many frames a stream may fall behind before it is
// cut; the client reconnects with Last-Event-ID and loses nothing.
const streamBuffer = 512

// subscriber is one open event stream, filtered to a channel or a thread
// (or neither: everything). client names the browser tab for notices.
type subscriber struct {
	channel, thread, client string
	// untilFinished ends the stream after the first finished message of
	// the bot it sends (?until=finished).
	untilFinished bool
	frames        chan []byte
}

func (s *subscriber) wants(m *message) bool {
	return (s.channel == "" || s.channel == m.channel) && (s.thread == "" || s.thread == m.thread)
}

// endsWith reports whether m is the last message the stream sends.
func (s *subscriber) endsWith(m *message) bool { return s.untilFinished && m.bot && m.finished }

// subscribe opens a stream. It returns, in seq order, the latest state of
// every message in the stream's scope changed after since (none when
// since is negative), and registers the stream in the same step so no
// change falls between the replay and the live updates. A stream whose
// replay holds its last message is not registered: its frames channel is
// closed at once.
func (h *hub) subscribe(s *subscriber, since int64) (replay [][]byte, seq uint64) {
	s.frames = make(chan []byte, streamBuffer)
	h.mu.Lock()
	defer h.mu.Unlock()
	if since >= 0 {
		var changed []*message
		for _, m := range h.msgs {
			if m.seq > uint64(since) && s.wants(m) {
				changed = append(changed, m)
			}
		}
		slices.SortFunc(changed, func(a, b *message) int { return cmpSeq(a.seq, b.seq) })
		for _, m := range changed {
			replay = append(replay, messageFrame(m.view()))
			if s.endsWith(m) { // nothing live follows: the stream ends after the replay
				close(s.frames)
				return replay, h.seq
			}
		}
	}
	h.subs[s] = struct{}{}
	return replay, h.seq
}

func cmpSeq(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// unsubscribe closes a stream from its reader's side.
func (h *hub) unsubscribe(s *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, s)
}

// broadcast hands a frame to every stream that wants m, without waiting:
// a stream whose buffer is full is cut (its channel closed) rather than
// allowed to stall the chat. Called with mu held.
func (h *hub) broadcast(m *message, frame []byte) {
	for s := range h.subs {
		if !s.wants(m) {
			continue
		}
		h.send(s, frame)
		if _, open := h.subs[s]; open && s.endsWith(m) { // the reader drains the frame, then ends
			delete(h.subs, s)
			close(s.frames)
		}
	}
}

func (h *hub) send(s *subscriber, frame []byte) {
	select {
	case s.frames <- frame:
	default:
		delete(h.subs, s)
		close(s.frames)
	}
}

// notify sends a notice to the streams of one client; it reports whether
// any was open.
func (h *hub) notify(client string, n noticeView) bool {
	if client == "" {
		return false
	}
	data, _ := json.Marshal(n)
	frame := fmt.Appendf(nil, "event: notice\ndata: %s\n\n", data)
	h.mu.Lock()
	defer h.mu.Unlock()
	sent := false
	for s := range h.subs {
		if s.client == client {
			h.send(s, frame)
			sent = true
		}
	}
	return sent
}
