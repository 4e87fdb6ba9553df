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

// replayPage is how many messages a replay frames (and reads from the
// Archive, those it finds no frame for) at once, replayList how many
// changes it lists at once (ids and seqs only), and replayBatch how many
// bytes of frames it writes at once: a replay holds about one page (at
// most 32 × 32 KB) however long the history, even while its reader
// stalls.
const (
	replayPage  = 32
	replayList  = 256
	replayBatch = 64 << 10
)

// replay sends, page by page in seq order, the latest state of every
// message in s's scope whose latest change has since < seq <= upTo. It
// reports whether the stream's last message was among them
// (until=finished). Changes after upTo come live.
func (h *hub) replay(ctx context.Context, s *subscriber, since, upTo uint64, send func(...[]byte) error) (ended bool, err error) {
	h.settle() // every change up to upTo is in the Archive
	out := frameBatch{send: send}
	src := h.replaySource(s, since, upTo)
	for {
		frames, done, err := h.readReplay(ctx, src)
		if err != nil {
			return false, fmt.Errorf("read the replay: %w", err)
		}
		for _, f := range frames {
			if err := out.add(f.frame); err != nil {
				return false, err
			}
			if s.untilFinished && f.last {
				return true, out.flush()
			}
		}
		if done {
			return false, out.flush()
		}
	}
}

// readReplay reads a replay's next page holding a replay slot: reading
// and framing are the CPU a replay costs, and twenty replays at once must
// not crowd out a person's post (issue 12: it stalled 1.42 s). Sending is
// outside the slot, so a slow reader holds none.
func (h *hub) readReplay(ctx context.Context, src replaySource) ([]cachedFrame, bool, error) {
	select {
	case h.replaySlots <- struct{}{}:
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
	defer func() { <-h.replaySlots }()
	return src.next(ctx)
}

// frameBatch collects frames and sends them replayBatch bytes at a time.
type frameBatch struct {
	send  func(...[]byte) error
	batch [][]byte
	size  int
}

func (b *frameBatch) add(f []byte) error {
	b.batch, b.size = append(b.batch, f), b.size+len(f)
	if b.size < replayBatch {
		return nil
	}
	return b.flush()
}

func (b *frameBatch) flush() error {
	if len(b.batch) == 0 {
		return nil
	}
	err := b.send(b.batch...)
	clear(b.batch) // let the frames go once sent
	b.batch, b.size = b.batch[:0], 0
	return sent(err)
}

// replaySource yields a replay's frames in seq order, a page at a time,
// until done.
type replaySource interface {
	next(ctx context.Context) (frames []cachedFrame, done bool, err error)
}

// replaySource lists the changes first where the Archive can, so that a
// change whose frame is kept is not read again.
func (h *hub) replaySource(s *subscriber, since, upTo uint64) replaySource {
	if l, ok := h.archive.(ChangeLister); ok {
		return &listedReplay{h: h, lister: l, s: s, after: since, upTo: upTo}
	}
	return &pagedReplay{h: h, s: s, after: since, upTo: upTo}
}

// listedReplay lists the changes, then frames them replayPage at a time:
// from the cache, else read from the Archive and encoded (and kept).
type listedReplay struct {
	h           *hub
	lister      ChangeLister
	s           *subscriber
	after, upTo uint64
	pending     []Change
	listed      bool // the last list reached upTo
}

func (r *listedReplay) next(ctx context.Context) ([]cachedFrame, bool, error) {
	if len(r.pending) == 0 {
		if r.listed || r.after >= r.upTo {
			return nil, true, nil
		}
		page, err := r.lister.ChangedIDs(ctx, r.after, r.upTo, r.s.channel, r.s.thread, replayList)
		if err != nil {
			return nil, false, err
		}
		r.listed = len(page) < replayList
		if len(page) == 0 {
			return nil, true, nil
		}
		r.after, r.pending = page[len(page)-1].Seq, page
	}
	n := min(len(r.pending), replayPage)
	chunk := r.pending[:n]
	r.pending = r.pending[n:]
	frames, err := r.h.framesOf(ctx, chunk)
	return frames, false, err
}

// framesOf returns the frames of these changes, in their order: kept
// ones from the cache, the others read from the Archive in one call,
// encoded and kept. A message changed again since it was listed is left
// out: its later change comes live.
func (h *hub) framesOf(ctx context.Context, changes []Change) ([]cachedFrame, error) {
	out := make([]cachedFrame, len(changes))
	var missing []string
	for i, c := range changes {
		if f, ok := h.frames.get(c.Seq); ok {
			out[i] = f
		} else {
			missing = append(missing, c.ID)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	stored, err := h.archive.Messages(ctx, missing)
	if err != nil {
		return nil, err
	}
	read := make(map[uint64]cachedFrame, len(stored))
	for _, s := range stored {
		f, err := h.encode(s)
		if err != nil {
			return nil, err
		}
		read[f.seq] = f
	}
	kept := out[:0]
	for i, c := range changes {
		if out[i].frame == nil {
			out[i] = read[c.Seq] // none: changed since, it comes live
		}
		if out[i].frame != nil {
			kept = append(kept, out[i])
		}
	}
	return kept, nil
}

// encode frames a message read from the Archive and keeps the frame.
func (h *hub) encode(s StoredMessage) (cachedFrame, error) {
	if frame, ok := storedFrame(s); ok {
		f := cachedFrame{id: s.ID, seq: s.Seq, frame: frame, last: s.Bot && s.Finished}
		h.frames.put(f)
		return f, nil
	}
	m, err := fromStored(s)
	if err != nil {
		return cachedFrame{}, fmt.Errorf("message %s: %w", s.ID, err)
	}
	f := frameOf(m, messageFrame(m.view()))
	h.frames.put(f)
	return f, nil
}

// pagedReplay reads whole pages with Changed, for an Archive that cannot
// list; it still takes kept frames rather than encoding again.
type pagedReplay struct {
	h           *hub
	s           *subscriber
	after, upTo uint64
	done        bool
}

func (r *pagedReplay) next(ctx context.Context) ([]cachedFrame, bool, error) {
	if r.done || r.after >= r.upTo {
		return nil, true, nil
	}
	stored, err := r.h.archive.Changed(ctx, r.after, r.upTo, r.s.channel, r.s.thread, replayPage)
	if err != nil {
		return nil, false, err
	}
	r.done = len(stored) < replayPage
	out := make([]cachedFrame, 0, len(stored))
	for _, s := range stored {
		f, ok := r.h.frames.get(s.Seq)
		if !ok {
			if f, err = r.h.encode(s); err != nil {
				return nil, false, err
			}
		}
		out, r.after = append(out, f), s.Seq
	}
	return out, false, nil
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
