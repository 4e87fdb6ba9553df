package bot

import (
	"context"
	"sync"

	"github.com/opsbot/opsbot/connectors"
)

// inbox takes events from Handle, which must not block, to one goroutine
// that routes them in the order they came: dropping platform retries is a
// database write, which can wait for the store's single writer, and so
// does not run on a connector's goroutine. Events are held in memory, as
// many as come: a connector has acknowledged each already.
type inbox struct {
	mu      sync.Mutex
	queue   []inboxItem
	running bool
	closed  bool
}

type inboxItem struct {
	ctx context.Context
	ev  connectors.Event
}

// push queues an event and starts the router when it is idle.
func (in *inbox) push(b *Bot, ctx context.Context, ev connectors.Event) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return
	}
	in.queue = append(in.queue, inboxItem{ctx, ev})
	if !in.running {
		in.running = true
		b.goAsync(func() { in.drain(b) })
	}
}

// drain routes events until the inbox is empty.
func (in *inbox) drain(b *Bot) {
	for {
		in.mu.Lock()
		if len(in.queue) == 0 || in.closed {
			in.running, in.queue = false, nil
			in.mu.Unlock()
			return
		}
		it := in.queue[0]
		in.queue = in.queue[1:]
		in.mu.Unlock()
		b.route(it.ctx, it.ev)
	}
}

// close drops what is queued and takes no more: the bot is shutting down.
func (in *inbox) close() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.closed = true
}
