package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// subscribe opens a stream and returns the seq it starts after: every
// later change reaches s.frames; what changed before, all of it in the
// Archive already, is the caller's replay (replay).
func (h *hub) subscribe(s *subscriber) (seq uint64) {
	s.frames = make(chan []byte, streamBuffer)
	h.subMu.Lock()
	defer h.subMu.Unlock()
	h.subs[s] = struct{}{}
	return h.sent
}

// errStreamGone: the client stopped reading (or left) during a replay.
var errStreamGone = errors.New("the stream's client is gone")

func sent(err error) error {
	if err != nil {
		return errStreamGone
	}
	return nil
}

// replayPage is how many messages a replay reads from the Archive at
// once, and replayBatch how many bytes of frames it writes at once: a
// replay holds about one page (at most 32 × 32 KB) however long the
// history, even while its reader stalls.
const (
	replayPage  = 32
	replayBatch = 64 << 10
)

// replay sends, page by page in seq order, the latest state of every
// message in s's scope whose latest change has since < seq <= upTo. It
// reports whether the stream's last message was among them
// (until=finished). Changes after upTo come live.
func (h *hub) replay(ctx context.Context, s *subscriber, since, upTo uint64, send func(...[]byte) error) (ended bool, err error) {
	h.settle() // every change up to upTo is in the Archive
	var batch [][]byte
	size := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := send(batch...)
		batch, size = batch[:0], 0
		return sent(err)
	}
	for after := since; after < upTo; {
		stored, err := h.archive.Changed(ctx, after, upTo, s.channel, s.thread, replayPage)
		if err != nil {
			return false, fmt.Errorf("read the replay: %w", err)
		}
		for i := range stored {
			m, err := fromStored(stored[i])
			stored[i] = StoredMessage{} // let it go once framed
			if err != nil {
				return false, err
			}
			f := messageFrame(m.view())
			batch, size, after = append(batch, f), size+len(f), m.seq
			if s.endsWith(m) {
				return true, flush()
			}
			if size >= replayBatch {
				if err := flush(); err != nil {
					return false, err
				}
			}
		}
		if len(stored) < replayPage {
			break
		}
	}
	return false, flush()
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
	h.subMu.Lock()
	defer h.subMu.Unlock()
	delete(h.subs, s)
}

// broadcast hands a frame to every stream that wants m, without waiting:
// a stream whose buffer is full is cut (its channel closed) rather than
// allowed to stall the chat. Called with saveMu held, after m's save.
func (h *hub) broadcast(m *message, frame []byte) {
	h.subMu.Lock()
	defer h.subMu.Unlock()
	h.sent = max(h.sent, m.seq)
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

// send is called with subMu held.
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
	h.subMu.Lock()
	defer h.subMu.Unlock()
	sent := false
	for s := range h.subs {
		if s.client == client {
			h.send(s, frame)
			sent = true
		}
	}
	return sent
}
