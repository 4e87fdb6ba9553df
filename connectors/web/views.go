package web

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// The hub's read side: snapshots for the API, each with the seq it was
// taken at, so a client can open a stream from there and miss nothing.
// Lists come a page at a time, and a page never exceeds maxListBytes.

// Page sizes of the lists.
const (
	defaultPageLimit = 50
	maxPageLimit     = 200
	// maxListBytes bounds a list response: a page stops early rather than
	// grow past it (a message may hold 32,000 characters).
	maxListBytes = 1<<20 - 4096
)

// page is what a list is asked for: at most limit items after cursor
// (an opaque position a previous page returned; "" for the first page).
type page struct {
	limit  int
	cursor uint64
}

// parsePage reads ?limit= and ?cursor=.
func parsePage(limit, cursor string) (page, error) {
	p := page{limit: defaultPageLimit}
	if limit != "" {
		n, err := strconv.Atoi(limit)
		if err != nil || n < 1 || n > maxPageLimit {
			return p, fmt.Errorf("limit: %q is not a number from 1 to %d", limit, maxPageLimit)
		}
		p.limit = n
	}
	if cursor != "" {
		n, err := strconv.ParseUint(cursor, 10, 64)
		if err != nil || n == 0 {
			return p, fmt.Errorf("cursor: %q is not a cursor this API returned: pass next_cursor from the previous page as it is", cursor)
		}
		p.cursor = n
	}
	return p, nil
}

func nextCursor(n uint64) string { return strconv.FormatUint(n, 10) }

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

// threadList is a page of a channel's threads, the most recently active
// first; the cursor is the seq of the last thread of the previous page.
func (h *hub) threadList(ctx context.Context, channel string, p page) (out []threadView, seq uint64, next string, err error) {
	h.mu.Lock()
	ids, ok := h.chThreads[channel]
	if !ok {
		h.mu.Unlock()
		return nil, 0, "", errNoChannel
	}
	var threads []thread
	for _, id := range ids {
		if t := h.threads[id]; p.cursor == 0 || t.seq < p.cursor {
			threads = append(threads, *t)
		}
	}
	seq = h.seq
	h.mu.Unlock()
	slices.SortFunc(threads, func(a, b thread) int { return cmpSeq(b.seq, a.seq) })
	more := len(threads) > p.limit
	threads = threads[:min(p.limit, len(threads))]
	roots := make([]string, len(threads))
	for i, t := range threads {
		roots[i] = t.id
	}
	msgs, err := h.messages(ctx, roots)
	if err != nil {
		return nil, 0, "", err
	}
	size := 0
	for i, t := range threads {
		root, ok := msgs[t.id]
		if !ok {
			continue // its save failed: it cannot be shown
		}
		v := threadView{ID: t.id, Channel: channel, Root: root.view(), Replies: t.replies, Seq: t.seq, Updated: t.updated}
		if size += jsonSize(v); size > maxListBytes && len(out) > 0 {
			return out, seq, nextCursor(threads[i-1].seq), nil
		}
		out = append(out, v)
	}
	if more && len(threads) > 0 {
		next = nextCursor(threads[len(threads)-1].seq)
	}
	return out, seq, next, nil
}

// messages reads messages by id, from the cache or the Archive.
func (h *hub) messages(ctx context.Context, ids []string) (map[string]*message, error) {
	out := map[string]*message{}
	var missing []string
	h.mu.Lock()
	for _, id := range ids {
		if m := h.cache.get(id); m != nil {
			cp := *m
			out[id] = &cp
		} else {
			missing = append(missing, id)
		}
	}
	h.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	h.settle()
	stored, err := h.archive.Messages(ctx, missing)
	if err != nil {
		return nil, fmt.Errorf("read messages: %w", err)
	}
	for _, s := range stored {
		m, err := fromStored(s)
		if err != nil {
			return nil, fmt.Errorf("message %s: %w", s.ID, err)
		}
		out[m.id] = m
	}
	return out, nil
}

// threadMessages is a page of a thread's messages, in the order posted:
// the newest ones, or those before the cursor (a message number).
func (h *hub) threadMessages(ctx context.Context, id string, p page) (out []messageView, seq uint64, next string, err error) {
	h.mu.Lock()
	_, ok := h.threads[id]
	seq = h.seq
	h.mu.Unlock()
	if !ok {
		return nil, 0, "", errNoThread
	}
	h.settle()
	stored, err := h.archive.ThreadMessages(ctx, id, p.cursor, p.limit+1)
	if err != nil {
		return nil, 0, "", fmt.Errorf("read thread %s: %w", id, err)
	}
	more := len(stored) > p.limit
	stored = stored[:min(p.limit, len(stored))]
	size := 0
	for i, s := range stored { // newest first
		m, err := fromStored(s)
		if err != nil {
			return nil, 0, "", fmt.Errorf("message %s: %w", s.ID, err)
		}
		v := m.view()
		if size += jsonSize(v); size > maxListBytes && len(out) > 0 {
			more, stored = true, stored[:i]
			break
		}
		out = append(out, v)
	}
	slices.Reverse(out)
	if more && len(stored) > 0 {
		next = nextCursor(uint64(idNumber(stored[len(stored)-1].ID)))
	}
	return out, seq, next, nil
}

func (h *hub) message(ctx context.Context, id string) (messageView, error) {
	m, err := h.lookup(ctx, id)
	if err != nil {
		return messageView{}, err
	}
	return m.view(), nil
}

// jsonSize is the size of v in a JSON response, with its separator.
func jsonSize(v any) int {
	b, _ := json.Marshal(v) // strings, numbers and times: cannot fail
	return len(b) + 1
}
