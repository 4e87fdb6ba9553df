package discord

import (
	"context"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/opsbot/opsbot/connectors"
)

// Start connects to the gateway and hands events to h until ctx ends.
//
// discordgo resumes a dropped session itself, at the resume_gateway_url
// READY gave, and answers op 7 and op 9 (reading op 9's "resumable"). A
// first connection that fails is tried again after 5 s, the wait doubling
// to 10 minutes, and discordgo's own reconnection backs off from 1 s to 10
// minutes: a crash loop stays far under Discord's 1,000 IDENTIFY a day. A
// token or an intent Discord refuses ends Start with a plain error.
func (c *Connector) Start(ctx context.Context, h connectors.Handler) error {
	c.mu.Lock()
	c.handler, c.ctx = h, ctx
	c.mu.Unlock()
	// Whatever the first attempt gives, the other connectors need not wait
	// for Discord: /readyz says whether it is connected.
	defer c.runOnce.Do(func() { close(c.running) })
	workCtx, stop := context.WithCancel(ctx)
	worker := make(chan struct{})
	go func() {
		defer close(worker)
		c.work(workCtx)
	}()
	defer func() {
		stop()
		<-worker
	}()
	if err := c.connectRetrying(ctx); err != nil {
		return err
	}
	c.watch(ctx)
	c.shutdown()
	c.clicks.Wait() // no click reaches h after Start returns
	return nil
}

// connectRetrying connects, waiting longer after each failure, until it
// is connected, ctx ends (nil) or Discord refuses for good.
func (c *Connector) connectRetrying(ctx context.Context) error {
	wait := 5 * time.Second
	for {
		err := c.connect(ctx)
		c.runOnce.Do(func() { close(c.running) })
		if err == nil || ctx.Err() != nil {
			return nil
		}
		if fatal := refusal(err); fatal != nil {
			return fatal
		}
		c.log.Warn("cannot connect to Discord; trying again", "in", wait.String(), "err", plain(err))
		if !sleep(ctx, wait) {
			return nil
		}
		wait = min(2*wait, 10*time.Minute)
	}
}

// connect learns the bot's own id and opens a new gateway session.
func (c *Connector) connect(ctx context.Context) error {
	me, err := c.rest.User("@me", discordgo.WithContext(ctx))
	if err != nil {
		return err
	}
	s := c.newSession()
	c.bind(s)
	c.mu.Lock()
	c.botID = me.ID
	c.gw = s // before Open: its events may come before Open returns
	c.mu.Unlock()
	if err := s.Open(); err != nil {
		return err
	}
	c.mark(s, true)
	c.log.Info("connected to Discord", "bot", me.Username)
	return nil
}

// bind routes s's events to the connector while s is its session.
//
// discordgo would call each handler in a goroutine of its own, which
// loses the order of a thread's messages; with SyncEvents it calls them
// on its reading goroutine, in the gateway's order, so they must not
// block: a message goes to the connector's queue, handled in order by one
// worker (see work); a click is handled at once in a goroutine of its
// own, as its acknowledgement has 3 seconds.
func (c *Connector) bind(s *discordgo.Session) {
	s.SyncEvents = true
	s.AddHandler(func(s *discordgo.Session, m *discordgo.MessageCreate) {
		if c.current(s) {
			c.queue <- m
		}
	})
	s.AddHandler(func(s *discordgo.Session, i *discordgo.InteractionCreate) {
		if c.current(s) {
			c.clicks.Go(func() { c.onInteraction(i) })
		}
	})
	s.AddHandler(func(s *discordgo.Session, e *discordgo.Event) {
		if c.current(s) {
			c.onGuildEvent(e)
		}
	})
	s.AddHandler(func(s *discordgo.Session, _ *discordgo.Connect) { c.mark(s, true) })
	s.AddHandler(func(s *discordgo.Session, _ *discordgo.Disconnect) { c.mark(s, false) })
}

// work hands queued messages on, in order, until ctx ends.
func (c *Connector) work(ctx context.Context) {
	for {
		select {
		case m := <-c.queue:
			c.onMessage(m)
		case <-ctx.Done():
			return
		}
	}
}

func (c *Connector) current(s *discordgo.Session) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gw == s
}

// mark notes whether session s is connected, when it is the current one.
func (c *Connector) mark(s *discordgo.Session, up bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gw != s || c.up == up {
		return
	}
	c.up = up
	if !up {
		c.downAt = time.Now()
	}
}

// watch replaces a gateway session that is stuck until ctx ends.
//
// discordgo's Open holds the session's lock while it reads the answer to
// RESUME; when that answer is op 9 (the session could not be resumed) or
// op 7, its handler calls Close, which takes the same lock: the session
// deadlocks for good (bwmarrin/discordgo#513, open since 2018; PR #1694
// is not merged). An Open waiting for a HELLO that never comes hangs the
// same way. So a session down for stuckAfter whose lock is still held is
// abandoned (its goroutine stays blocked; its socket is Discord's to
// close) and a new one identifies.
func (c *Connector) watch(ctx context.Context) {
	tick := time.NewTicker(c.stuckAfter / 4)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if c.stuck() {
			c.log.Warn("the Discord gateway session is stuck reconnecting (a known discordgo defect); opening a new session")
			if err := c.connectRetrying(ctx); err != nil {
				c.log.Error("Discord refused a new session", "err", err.Error())
			}
		}
	}
}

// stuck says whether the gateway has been down for stuckAfter with its
// session's lock held all along (an Open that never returns).
func (c *Connector) stuck() bool {
	c.mu.Lock()
	s, down := c.gw, !c.up && time.Since(c.downAt) >= c.stuckAfter
	c.mu.Unlock()
	if !down || s == nil {
		return false
	}
	if s.TryLock() {
		s.Unlock()
		return false // discordgo is between attempts: its backoff goes on
	}
	return true
}

// shutdown closes the gateway for good. ShouldReconnectOnError goes off
// first: the read error Close itself causes would otherwise make discordgo
// open the session again. A session stuck in discordgo (see watch) cannot
// be closed and is left after a few seconds.
func (c *Connector) shutdown() {
	c.mu.Lock()
	s := c.gw
	c.gw, c.up = nil, false
	c.mu.Unlock()
	if s == nil {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Lock()
		s.ShouldReconnectOnError = false
		s.Unlock()
		if err := s.Close(); err != nil {
			c.log.Debug("closing the gateway", "err", err.Error())
		}
	}()
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		c.log.Warn("the Discord gateway session did not close (stuck in discordgo); leaving it")
	}
}
