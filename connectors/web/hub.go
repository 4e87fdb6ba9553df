package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/opsbot/opsbot/connectors"
)

// message is one message of the chat as the connector holds it.
type message struct {
	id, channel, thread, user string
	bot                       bool
	body                      body
	finished                  bool
	seq                       uint64
	created, updated          time.Time
	size                      int // in the cache
	// request is what a person's post was sent with (PostRequest).
	request PostRequest
}

// thread is a conversation's entry in the index: the messages themselves
// are in the Archive (and the recent ones in the cache).
type thread struct {
	id, channel string
	replies     int
	// botJoined is set once the bot posted in the thread or was mentioned:
	// from then on every message in it is for the bot.
	botJoined bool
	seq       uint64
	updated   time.Time
}

// hub holds the chat's index — threads, channels, the sequence number —
// its recently used messages, and the streams subscribed to its changes.
// Everything else is read from the Archive a page at a time, so memory
// stays bounded however much the chat holds. One mutex guards the index
// and the cache: every change is small, and nothing under it waits for
// the Archive. A change is saved, then broadcast (record, then act: a
// crash between the two must not leave a client showing what the Archive
// never kept); saveMu keeps both in the order of the changes, so a stream
// never sees seq numbers out of order.
type hub struct {
	archive Archive
	now     func() time.Time
	// keeper, when the Archive is one, keeps seq from going backwards
	// across restarts; reserved is the highest seq it has on record.
	keeper   SeqKeeper
	reserved uint64

	mu        sync.Mutex
	seq       uint64
	threads   map[string]*thread
	channels  []string            // configured ones first, then as they appear
	chThreads map[string][]string // channel → thread ids, in the order started
	cache     *msgCache

	// frames keeps the encoded frames of recent changes for replays; it
	// has its own lock.
	frames *frameCache
	// replaySlots bounds how many replays read and frame a page at once
	// (replaySlotCount).
	replaySlots chan struct{}

	// subMu guards the streams and sent, the seq of the latest change
	// broadcast: every change up to it is in the Archive. It is taken
	// under saveMu, never the other way round, and never with mu.
	subMu sync.Mutex
	subs  map[*subscriber]struct{}
	sent  uint64

	// saveMu keeps the Archive's saves in the order of the changes: a
	// change takes it before releasing mu and saves outside mu. Readers
	// wait for it (settle) before reading the Archive, so that what they
	// read holds every change up to the seq they report.
	saveMu sync.Mutex
}

// Errors the hub returns; the API maps them to status codes.
var (
	errNoMessage = errors.New("no such message")
	errNoThread  = errors.New("no such thread")
	errNoChannel = errors.New("no such channel")
	errNotBot    = errors.New("only the bot's own messages can be edited")
	errBotDown   = errors.New("the bot is not running")
)

func newHub(archive Archive, channels []string, now func() time.Time) *hub {
	h := &hub{archive: archive, now: now, threads: map[string]*thread{}, chThreads: map[string][]string{},
		cache: newMsgCache(cacheBytes), frames: newFrameCache(frameCacheBytes),
		replaySlots: make(chan struct{}, replaySlotCount()), subs: map[*subscriber]struct{}{}}
	h.keeper, _ = archive.(SeqKeeper)
	for _, ch := range channels {
		h.addChannel(ch)
	}
	return h
}

// seqBlock is how many sequence numbers the hub reserves at a time: one
// write per block, and at most a block of numbers skipped at a restart.
const seqBlock = 64

// reserve makes sure seq is on record as handed out before anyone sees
// it; h.mu is held. It writes once per seqBlock changes.
func (h *hub) reserve(ctx context.Context, seq uint64) error {
	if h.keeper == nil || seq <= h.reserved {
		return nil
	}
	upTo := seq + seqBlock - 1
	if err := h.keeper.ReserveSeq(context.WithoutCancel(ctx), upTo); err != nil {
		return fmt.Errorf("reserve message numbers: %w", err)
	}
	h.reserved = upTo
	return nil
}

func (h *hub) addChannel(ch string) {
	if _, ok := h.chThreads[ch]; !ok {
		h.chThreads[ch] = nil
		h.channels = append(h.channels, ch)
	}
}

// load fills the index from the Archive, in the order threads started.
// A thread counts as one the bot joined when it posted there or a
// person's message holds "@opsbot" (a little wider than a mention, which
// only sends a few more of that thread's messages to the bot).
func (h *hub) load(ctx context.Context) error {
	stored, err := h.archive.Threads(ctx, "@"+BotName)
	if err != nil {
		return err
	}
	slices.SortFunc(stored, func(a, b StoredThread) int { return idNumber(a.ID) - idNumber(b.ID) })
	for _, s := range stored {
		h.index(&thread{id: s.ID, channel: s.Channel, replies: s.Replies, botJoined: s.HasBot || s.Mentioned,
			seq: s.Seq, updated: s.Updated})
		h.seq = max(h.seq, s.Seq, s.LastID)
	}
	if h.keeper != nil {
		reserved, err := h.keeper.ReservedSeq(ctx)
		if err != nil {
			return err
		}
		h.seq = max(h.seq, reserved)
		h.reserved = h.seq
	}
	h.sent = h.seq
	return nil
}

func (h *hub) index(t *thread) {
	h.threads[t.id] = t
	h.addChannel(t.channel)
	h.chThreads[t.channel] = append(h.chThreads[t.channel], t.id)
}

// idNumber is the number in a message id "m<n>": the seq it was posted at.
func idNumber(id string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(id, "m"))
	return n
}

// settle waits until every change made so far is in the Archive.
func (h *hub) settle() {
	h.saveMu.Lock()
	//lint:ignore SA2001 an empty critical section: waiting for the saves is the point
	h.saveMu.Unlock()
}

// lookup finds a message: in the cache, else in the Archive.
func (h *hub) lookup(ctx context.Context, id string) (*message, error) {
	h.mu.Lock()
	if m := h.cache.get(id); m != nil {
		cp := *m // the cached one changes under mu
		h.mu.Unlock()
		return &cp, nil
	}
	h.mu.Unlock()
	h.settle()
	stored, err := h.archive.Messages(ctx, []string{id})
	if err != nil {
		return nil, fmt.Errorf("read message %s: %w", id, err)
	}
	if len(stored) == 0 {
		return nil, fmt.Errorf("%w: %q", errNoMessage, id)
	}
	return fromStored(stored[0])
}

// post is a new message. thread "" starts a thread. forBot is set when the
// message is for the bot: a mention, or any message in a thread the bot is
// part of; a message for the bot is refused with errBotDown unless botUp.
type post struct {
	channel, thread, user string
	bot                   bool
	body                  body
	botUp                 bool
	// finished is set for a bot's message that is complete when posted.
	finished bool
	// request is what a person's post was sent with, kept with it.
	request PostRequest
}

// add posts a message and reports whether it is for the bot.
func (h *hub) add(ctx context.Context, p post) (v messageView, forBot bool, err error) {
	v, err = h.change(ctx, func(seq uint64, now time.Time) (*message, error) {
		if _, ok := h.chThreads[p.channel]; !ok && !p.bot {
			return nil, errNoChannel
		}
		m := &message{id: "m" + strconv.FormatUint(seq, 10), channel: p.channel, thread: p.thread,
			user: p.user, bot: p.bot, body: p.body, finished: !p.bot || p.finished, created: now, request: p.request}
		if m.thread == "" {
			m.thread = m.id
		} else if t := h.threads[m.thread]; t == nil || t.channel != p.channel {
			return nil, errNoThread
		}
		t := h.threads[m.thread]
		if !p.bot {
			forBot = mentions(p.body.Text) || (t != nil && t.botJoined)
		}
		if forBot && !p.botUp {
			return nil, errBotDown
		}
		if t == nil {
			t = &thread{id: m.thread, channel: m.channel}
			h.index(t)
		} else {
			t.replies++
		}
		t.botJoined = t.botJoined || m.bot || (!m.bot && mentions(m.body.Text))
		if m.request.Key != "" {
			m.request.ForBot = forBot
		}
		return m, nil
	})
	return v, forBot, err
}

// forBot reports whether a person's message with this text, posted in
// thread ("" for a new one), would go to the bot (see add).
func (h *hub) forBot(channel, thread, text string) bool {
	if mentions(text) {
		return true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.threads[thread]
	return t != nil && t.channel == channel && t.botJoined
}

// How an edit treats a message being written.
type editMode int

const (
	editAny    editMode = iota // any bot message; a stream stays one
	editStream                 // only a message being written
	stopStream                 // only a message being written, which it completes
)

// edit replaces a bot message's content by what change makes of it. A
// stream edit of a complete message fails with connectors.ErrStreamEnded.
// A message not in the cache is read from the Archive first, outside the
// lock; one that a concurrent change put in the cache meanwhile is the
// one changed.
func (h *hub) edit(ctx context.Context, id string, change func(*message) body, mode editMode) error {
	loaded, err := h.lookup(ctx, id)
	if err != nil {
		return err
	}
	_, err = h.change(ctx, func(uint64, time.Time) (*message, error) {
		m := h.cache.get(id)
		if m == nil {
			m = loaded
		}
		if !m.bot {
			return nil, errNotBot
		}
		if mode != editAny && m.finished {
			return nil, fmt.Errorf("message %s: %w", id, connectors.ErrStreamEnded)
		}
		m.body = change(m)
		m.finished = m.finished || mode == stopStream
		return m, nil
	})
	return err
}

// change applies fn under the lock with the next seq, saves the changed
// message and then broadcasts it: a change that was not kept is shown to
// nobody. The save runs with ctx's values but not its cancellation: a
// change already made in memory must also be kept.
func (h *hub) change(ctx context.Context, fn func(seq uint64, now time.Time) (*message, error)) (messageView, error) {
	h.mu.Lock()
	seq, now := h.seq+1, h.now()
	// Under the lock, so that no seq is shown before it is on record; the
	// write comes once per seqBlock changes.
	if err := h.reserve(ctx, seq); err != nil {
		h.mu.Unlock()
		return messageView{}, err
	}
	m, err := fn(seq, now)
	if err != nil {
		h.mu.Unlock()
		return messageView{}, err
	}
	t := h.threads[m.thread]
	if t == nil { // deleted for its age meanwhile
		h.mu.Unlock()
		return messageView{}, errNoThread
	}
	h.seq, m.seq, m.updated = seq, seq, now
	t.seq, t.updated = seq, now
	h.cache.put(m)
	v := m.view()
	shown := *m // the cached one changes under mu; the broadcast reads this copy
	stored := m.stored()
	h.saveMu.Lock()
	h.mu.Unlock()
	defer h.saveMu.Unlock()
	if err := h.archive.Save(context.WithoutCancel(ctx), stored); err != nil {
		return v, fmt.Errorf("archive message %s: %w", m.id, err)
	}
	frame := messageFrame(v)
	h.frames.put(frameOf(&shown, frame))
	h.broadcast(&shown, frame)
	return v, nil
}

// messageFrame is the SSE frame of one message update.
func messageFrame(v messageView) []byte {
	data, _ := json.Marshal(v) // strings, numbers and times: cannot fail
	return fmt.Appendf(nil, "id: %d\nevent: message\ndata: %s\n\n", v.Seq, data)
}

// prune deletes the threads whose latest change is older than cutoff,
// from the index, the cache and the Archive; it returns how many.
func (h *hub) prune(ctx context.Context, cutoff time.Time) (int, error) {
	h.mu.Lock()
	old := map[string]bool{}
	for id, t := range h.threads {
		if t.updated.Before(cutoff) {
			old[id] = true
			delete(h.threads, id)
		}
	}
	if len(old) > 0 {
		for ch, ids := range h.chThreads {
			h.chThreads[ch] = slices.DeleteFunc(ids, func(id string) bool { return old[id] })
		}
		for id, e := range h.cache.byID {
			if old[e.Value.(*message).thread] {
				h.cache.remove(id)
			}
		}
	}
	h.saveMu.Lock() // after the saves already queued, none of which can be for these threads
	h.mu.Unlock()
	defer h.saveMu.Unlock()
	if len(old) == 0 {
		return 0, nil
	}
	ids := make([]string, 0, len(old))
	for id := range old {
		ids = append(ids, id)
	}
	if err := h.archive.DeleteThreads(ctx, ids); err != nil {
		return 0, fmt.Errorf("delete %d old threads: %w", len(ids), err)
	}
	return len(ids), nil
}
