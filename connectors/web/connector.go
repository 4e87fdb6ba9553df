package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/opsbot/opsbot/connectors"
)

// streamWriteTimeout is how long one write to an event stream may take:
// a reader stalled that long is disconnected (it reconnects with
// Last-Event-ID and loses nothing).
const streamWriteTimeout = 15 * time.Second

// Platform is the Connector's name and its events' Platform.
const Platform = "web"

// Connector is the embedded web chat: it keeps the chat's messages (in an
// Archive across restarts), serves the page and the API through Handler,
// and hands people's messages and clicks to the bot. It does not listen
// itself: the caller mounts Handler on its own server.
type Connector struct {
	// Models lists the names of the models the agent can use, as the
	// provider's API knows them (e.g. claude-sonnet-4-5), for GET
	// /api/models: not a provider's label. The composition root sets it
	// before serving; nil lists none.
	Models func() []string
	// Log receives what the connector cannot report to a caller, such as a
	// failed save of a person's message after it was shown. Nil: discard.
	Log *slog.Logger
	// Redact, when set, redacts what a person posts before it is shown,
	// archived or handed to the bot (the composition root passes the
	// bot's redactor); a post it changed carries RedactedNote. Set it
	// before serving.
	Redact func(string) string
	// Full, when set, says why the bot would turn away a message to a
	// thread now ("" when it would take it; thread "" is a new thread):
	// such a post is answered 429 with Retry-After, before it is kept.
	Full func(channel, thread string) string
	// Postmortem, when set, writes a thread's postmortem in markdown for
	// GET /api/threads/{thread}/postmortem.md; found false: nothing is on
	// record in it. Set it before serving.
	Postmortem func(ctx context.Context, channel, thread string) (md string, found bool, err error)

	cfg      Config
	hub      *hub
	run      atomic.Pointer[running]
	started  atomic.Bool
	up       chan struct{} // closed once Start has taken the Handler
	stopped  chan struct{}
	stopOnce sync.Once
	requests *requestLog
	postMu   sync.Mutex // see addOnce
	proxies  []netip.Prefix
	limits   *postLimits
	people   *people
	// writeTimeout bounds each write to an event stream (streamWriteTimeout).
	writeTimeout time.Duration
	// streamEnded, when set (by tests), is called as each event stream's
	// handler returns.
	streamEnded func()
}

// running is the bot's Handler while Start runs, with Start's ctx.
type running struct {
	ctx context.Context
	h   connectors.Handler
}

var (
	_ connectors.Connector = (*Connector)(nil)
	_ connectors.Streamer  = (*Connector)(nil)
)

// New returns a Connector for cfg (its defaults filled in) with the
// messages archive holds; a nil archive keeps them in memory only.
func New(ctx context.Context, cfg Config, archive Archive) (*Connector, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	if archive == nil {
		archive = NewMemoryArchive()
	}
	c := &Connector{cfg: cfg, up: make(chan struct{}), stopped: make(chan struct{}), requests: newRequestLog(1024),
		limits: newPostLimits(cfg.PostRate, cfg.PostBurst, time.Now), people: newPeople(), writeTimeout: streamWriteTimeout}
	c.proxies, _ = cfg.proxies() // checked by Validate
	c.hub = newHub(archive, cfg.Channels, time.Now)
	if err := c.hub.load(ctx); err != nil {
		return nil, fmt.Errorf("web: load messages: %w", err)
	}
	if err := c.people.load(ctx, cfg.Users, archive); err != nil {
		return nil, fmt.Errorf("web: load the names of the chat's people: %w", err)
	}
	if err := c.requests.load(ctx, archive); err != nil {
		return nil, fmt.Errorf("web: load the latest posts' request ids: %w", err)
	}
	return c, nil
}

// Config is the connector's configuration, defaults filled in; the bot
// reads OnBusy from it.
func (c *Connector) Config() Config { return c.cfg }

// Name is "web".
func (c *Connector) Name() string { return Platform }

// Limits are generous: a browser has no platform limits, and a short edit
// interval makes answers grow smoothly. An answer is a stream, shown as
// being written until it stops; a live stream may be edited (its tool
// activity line changes while it grows).
func (c *Connector) Limits() connectors.Limits {
	return connectors.Limits{MaxText: 32000, EditInterval: 250 * time.Millisecond, MaxButtons: 10,
		NativeStreaming: true, StreamEdits: true}
}

// Start hands events to h until ctx ends; then it closes every open event
// stream so that the server's shutdown need not wait for them. A
// Connector starts once. Running is closed once events reach h.
func (c *Connector) Start(ctx context.Context, h connectors.Handler) error {
	if !c.started.CompareAndSwap(false, true) {
		return errors.New("web: already started")
	}
	c.run.Store(&running{ctx: ctx, h: h})
	close(c.up)
	c.keepPruning(ctx)
	c.run.Store(nil)
	c.stopOnce.Do(func() { close(c.stopped) })
	return nil
}

// pruneEvery is how often threads past web.retention are deleted.
const pruneEvery = time.Hour

// keepPruning deletes the threads past retention now and every
// pruneEvery, until ctx ends.
func (c *Connector) keepPruning(ctx context.Context) {
	tick := time.NewTicker(pruneEvery)
	defer tick.Stop()
	for {
		if n, err := c.hub.prune(ctx, c.hub.now().Add(-c.cfg.Retention)); err != nil {
			c.logger().Error("web: old threads could not be deleted; they are tried again in an hour", "err", err)
		} else if n > 0 {
			c.logger().Info("web: deleted threads past web.retention", "threads", n, "retention", c.cfg.Retention)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// dispatch hands ev to the bot: errBotDown when the bot is not running,
// the Handler's error when it could not record the event. The bot's
// Handler returns nil once the event is on record (connectors.Handler),
// and the API answers 201/202 only after it: an answered post or click is
// never lost to a crash.
func (c *Connector) dispatch(ev connectors.Event) error {
	r := c.run.Load()
	if r == nil {
		return errBotDown
	}
	ev.Platform = Platform
	return r.h(r.ctx, ev)
}

// notTaken is what a client is told of an event the bot did not take:
// why, in the Handler's words, and what to do.
func notTaken(what string, err error) string {
	if errors.Is(err, errBotDown) {
		return what + ": " + errBotDown.Error() + "; send it again once it runs"
	}
	return what + " (" + strings.TrimPrefix(err.Error(), connectors.ErrNotRecorded.Error()+": ") + "); send it again"
}

func (c *Connector) botUp() bool { return c.run.Load() != nil }

// Running is closed once Start hands events to its Handler: a caller that
// starts the connector in a goroutine waits on it before the first
// request that needs the bot.
func (c *Connector) Running() <-chan struct{} { return c.up }

// Post adds a complete message of the bot to d's thread of d.Channel, or
// starts a thread when d.Thread is "". A channel the config does not list
// is added to the page's list.
func (c *Connector) Post(ctx context.Context, d connectors.Dest, m connectors.Message) (connectors.Ref, error) {
	return c.post(ctx, d, m, true)
}

// StartStream posts a message of the bot that shows as being written
// until StopStream.
func (c *Connector) StartStream(ctx context.Context, d connectors.Dest, m connectors.Message) (connectors.Ref, error) {
	return c.post(ctx, d, m, false)
}

func (c *Connector) post(ctx context.Context, d connectors.Dest, m connectors.Message, finished bool) (connectors.Ref, error) {
	if !channelName.MatchString(d.Channel) {
		return connectors.Ref{}, fmt.Errorf("web: post: %q is not a channel name", d.Channel)
	}
	v, _, err := c.hub.add(ctx, post{channel: d.Channel, thread: d.Thread, user: BotName, bot: true, body: c.noteSelfNamed(toBody(m)), finished: finished})
	if err != nil && v.ID == "" {
		return connectors.Ref{}, fmt.Errorf("web: post: %w", err)
	}
	ref := connectors.Ref{Platform: Platform, Channel: v.Channel, Thread: v.Thread, ID: v.ID}
	if err != nil {
		return ref, fmt.Errorf("web: post: %w", err) // shown, but not archived
	}
	return ref, nil
}

// Edit replaces the content of one of the bot's messages; a stream stays
// a stream.
func (c *Connector) Edit(ctx context.Context, ref connectors.Ref, m connectors.Message) error {
	if err := c.hub.edit(ctx, ref.ID, func(*message) body { return c.noteSelfNamed(toBody(m)) }, editAny); err != nil {
		return fmt.Errorf("web: edit: %w", err)
	}
	return nil
}

// AppendStream adds text to a message being written.
func (c *Connector) AppendStream(ctx context.Context, ref connectors.Ref, text string) error {
	add := toBody(connectors.Message{Text: text}).Text
	err := c.hub.edit(ctx, ref.ID, func(m *message) body {
		b := m.body
		b.Text += add
		return b
	}, editStream)
	if err != nil {
		return fmt.Errorf("web: append: %w", err)
	}
	return nil
}

// StopStream gives a message being written its complete form: clients
// stop showing it as being written, and its update carries
// finished=true. It may still be edited (an approval card after the
// decision); it stays finished.
func (c *Connector) StopStream(ctx context.Context, ref connectors.Ref, final connectors.Message) error {
	if err := c.hub.edit(ctx, ref.ID, func(*message) body { return c.noteSelfNamed(toBody(final)) }, stopStream); err != nil {
		return fmt.Errorf("web: stop stream: %w", err)
	}
	return nil
}

func (c *Connector) logger() *slog.Logger {
	if c.Log != nil {
		return c.Log
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}
