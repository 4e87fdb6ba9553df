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
}

// thread is a conversation: its first message and the replies.
type thread struct {
	channel string
	// ids are the messages in the order posted; ids[0] is the root.
	ids []string
	// botJoined is set once the bot posted in the thread or was mentioned:
	// from then on every message in it is for the bot.
	botJoined bool
	seq       uint64
	updated   time.Time
}

// hub holds the chat — messages, threads, channels, the sequence number —
// and the streams subscribed to its changes. One mutex guards it all:
// every change is small, and a change and its broadcast must be one step
// so that a stream never sees seq numbers out of order.
type hub struct {
	archive Archive
	now     func() time.Time

	mu        sync.Mutex
	seq       uint64
	msgs      map[string]*message
	threads   map[string]*thread
	channels  []string            // configured ones first, then as they appear
	chThreads map[string][]string // channel → thread ids, in the order started
	subs      map[*subscriber]struct{}

	// saveMu keeps the Archive's saves in the order of the changes: a
	// change takes it before releasing mu and saves outside mu. Readers
	// and streams thus wait for the disk only while a second change queues
	// behind a save in progress, and then for that one save.
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
	h := &hub{archive: archive, now: now, msgs: map[string]*message{}, threads: map[string]*thread{},
		chThreads: map[string][]string{}, subs: map[*subscriber]struct{}{}}
	for _, ch := range channels {
		h.addChannel(ch)
	}
	return h
}

func (h *hub) addChannel(ch string) {
	if _, ok := h.chThreads[ch]; !ok {
		h.chThreads[ch] = nil
		h.channels = append(h.channels, ch)
	}
}

// load fills the hub from the Archive, in the order messages were posted.
func (h *hub) load(ctx context.Context) error {
	stored, err := h.archive.Load(ctx)
	if err != nil {
		return err
	}
	msgs := make([]*message, 0, len(stored))
	for _, s := range stored {
		m, err := fromStored(s)
		if err != nil {
			return fmt.Errorf("message %s: %w", s.ID, err)
		}
		msgs = append(msgs, m)
	}
	slices.SortFunc(msgs, func(a, b *message) int { return idNumber(a.id) - idNumber(b.id) })
	for _, m := range msgs {
		h.place(m)
		h.seq = max(h.seq, m.seq, uint64(idNumber(m.id)))
	}
	return nil
}

// idNumber is the number in a message id "m<n>": the seq it was posted at.
func idNumber(id string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(id, "m"))
	return n
}

// place files a message into its thread and channel.
func (h *hub) place(m *message) {
	h.msgs[m.id] = m
	t := h.threads[m.thread]
	if t == nil {
		t = &thread{channel: m.channel}
		h.threads[m.thread] = t
		h.addChannel(m.channel)
		h.chThreads[m.channel] = append(h.chThreads[m.channel], m.thread)
	}
	t.ids = append(t.ids, m.id)
	t.botJoined = t.botJoined || m.bot || (!m.bot && mentions(m.body.Text))
	if m.seq > t.seq {
		t.seq, t.updated = m.seq, m.updated
	}
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
}

// add posts a message and reports whether it is for the bot.
func (h *hub) add(ctx context.Context, p post) (v messageView, forBot bool, err error) {
	v, err = h.change(ctx, func(seq uint64, now time.Time) (*message, error) {
		if _, ok := h.chThreads[p.channel]; !ok && !p.bot {
			return nil, errNoChannel
		}
		m := &message{id: "m" + strconv.FormatUint(seq, 10), channel: p.channel, thread: p.thread,
			user: p.user, bot: p.bot, body: p.body, finished: !p.bot || p.finished, created: now}
		if m.thread == "" {
			m.thread = m.id
		} else if t := h.threads[m.thread]; t == nil || t.channel != p.channel {
			return nil, errNoThread
		}
		if t := h.threads[m.thread]; !p.bot {
			forBot = mentions(p.body.Text) || (t != nil && t.botJoined)
		}
		if forBot && !p.botUp {
			return nil, errBotDown
		}
		h.place(m)
		return m, nil
	})
	return v, forBot, err
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
func (h *hub) edit(ctx context.Context, id string, change func(*message) body, mode editMode) error {
	_, err := h.change(ctx, func(uint64, time.Time) (*message, error) {
		m, err := h.botMessage(id)
		if err != nil {
			return nil, err
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

func (h *hub) botMessage(id string) (*message, error) {
	m := h.msgs[id]
	switch {
	case m == nil:
		return nil, fmt.Errorf("%w: %q", errNoMessage, id)
	case !m.bot:
		return nil, errNotBot
	}
	return m, nil
}

// change applies fn under the lock with the next seq, broadcasts the
// changed message and saves it. The save runs with ctx's values but not
// its cancellation: a change already shown must also be kept.
func (h *hub) change(ctx context.Context, fn func(seq uint64, now time.Time) (*message, error)) (messageView, error) {
	h.mu.Lock()
	seq, now := h.seq+1, h.now()
	m, err := fn(seq, now)
	if err != nil {
		h.mu.Unlock()
		return messageView{}, err
	}
	h.seq, m.seq, m.updated = seq, seq, now
	t := h.threads[m.thread]
	t.seq, t.updated = seq, now
	v := m.view()
	h.broadcast(m, messageFrame(v))
	stored := m.stored()
	h.saveMu.Lock()
	h.mu.Unlock()
	defer h.saveMu.Unlock()
	if err := h.archive.Save(context.WithoutCancel(ctx), stored); err != nil {
		return v, fmt.Errorf("archive message %s: %w", m.id, err)
	}
	return v, nil
}

// messageFrame is the SSE frame of one message update.
func messageFrame(v messageView) []byte {
	data, _ := json.Marshal(v) // strings, numbers and times: cannot fail
	return fmt.Appendf(nil, "id: %d\nevent: message\ndata: %s\n\n", v.Seq, data)
}
