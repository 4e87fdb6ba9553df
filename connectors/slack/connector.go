package slack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"

	"github.com/opsbot/opsbot/connectors"
)

// Platform is the Connector's name and its events' Platform.
const Platform = "slack"

// StreamLifetime is how long Slack lets a native stream take appends
// after it started: about five minutes, whatever is appended
// (slack-python-sdk #1859, vercel/chat #637). A little less is claimed,
// so that the renderer rolls over (at 4/5 of it) well before 4 minutes.
const StreamLifetime = 4*time.Minute + 30*time.Second

// maxStreamText is the most characters the renderer puts in one native
// stream: Slack's appends take 12,000 (chat.appendStream), less a margin
// for mentions, which grow when rendered.
const maxStreamText = 11000

// Options are what the composition root (or a test) sets beside Config.
type Options struct {
	// HTTPClient makes the Web API calls (default: a client with a 30 s
	// timeout). A metrics RoundTripper goes here.
	HTTPClient *http.Client
	// Dialer dials the Socket Mode WebSocket (default gorilla's).
	Dialer *websocket.Dialer
	// UserGroups are the user group ids approver rules name: a click
	// carries those of them the clicker belongs to.
	UserGroups []string
	// PingInterval is how long the Socket Mode connection may go without
	// a ping from Slack before it is dropped and made anew (default 30 s:
	// Slack pings every few seconds).
	PingInterval time.Duration
	// Threads keeps the assistant threads people started (nil: in
	// memory, forgotten by a restart).
	Threads AssistantThreadStore
	// Redact masks secrets in what the connector posts of its own accord
	// rather than through the bot (an assistant thread's title, taken
	// from the question): the bot's redactor's String goes here. Nil: a
	// redactor with the default rules.
	Redact func(string) string
	// Log receives what the connector cannot report to a caller. Nil:
	// discard.
	Log *slog.Logger
}

// Connector is Slack: one workspace, one bot user.
type Connector struct {
	cfg  Config
	opt  Options
	api  *slack.Client
	log  *slog.Logger
	bud  *budgets
	ppl  *people
	live *streams
	// threads are the assistant threads people started (assistant.go).
	threads AssistantThreadStore
	// marks are the signs of the questions being answered (signs.go).
	marks signs

	// Set by Start from auth.test.
	self atomic.Pointer[identity]

	up       chan struct{} // closed once Start hands events on
	upOnce   sync.Once
	known    chan struct{} // closed once auth.test said who the bot is
	knownOne sync.Once
	started  atomic.Bool
	inbox    chan inbound
	down     atomic.Pointer[error] // why the connector is not ready
	sigs     *seenSignatures
	dispatch atomic.Pointer[running]
}

// identity is the bot as Slack knows it.
type identity struct {
	UserID, BotID, Team string
}

// running is the Handler while Start runs.
type running struct {
	ctx context.Context
	h   connectors.Handler
}

var (
	_ connectors.Connector = (*Connector)(nil)
	_ connectors.Streamer  = (*Connector)(nil)
)

// New returns a connector for cfg (defaults filled in); it connects when
// started.
func New(cfg Config, opt Options) (*Connector, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("slack: %w", err)
	}
	if !cfg.Enabled() {
		return nil, errors.New("slack: slack.bot_token is not set")
	}
	if opt.HTTPClient == nil {
		opt.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if opt.PingInterval <= 0 {
		opt.PingInterval = 30 * time.Second
	}
	log := opt.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	api := slack.New(cfg.BotToken, slack.OptionAPIURL(cfg.APIURL), slack.OptionHTTPClient(opt.HTTPClient), slack.OptionAppLevelToken(cfg.AppToken))
	c := &Connector{cfg: cfg, opt: opt, api: api, log: log, bud: newBudgets(), live: newStreams(),
		marks: signs{byThread: map[string]*sign{}}, up: make(chan struct{}), known: make(chan struct{}), inbox: make(chan inbound, inboxSize), sigs: newSeenSignatures()}
	c.ppl = newPeople(c)
	c.threads = opt.Threads
	if c.threads == nil {
		c.threads = &memoryThreads{}
	}
	c.setDown(errors.New("slack: not connected yet"))
	return c, nil
}

// Name is "slack".
func (c *Connector) Name() string { return Platform }

// Limits are Slack's: 4,000 characters of text a message, chat.update
// Tier 3 (~50 a minute per workspace), a message edited at most once a
// second, and native streams that live about five minutes.
func (c *Connector) Limits() connectors.Limits {
	return connectors.Limits{MaxText: maxText, EditInterval: time.Second, EditsPerMinute: int(tiers["chat.update"]),
		MaxButtons: maxActions, NativeStreaming: c.cfg.Streams(), StreamLifetime: StreamLifetime, StreamMaxText: maxStreamText}
}

// Running is closed once Start hands events to its Handler.
func (c *Connector) Running() <-chan struct{} { return c.up }

// Identified is closed once Slack said who the bot is (auth.test): from
// then on events are read (HTTP mode answers 503 before, and Slack
// retries).
func (c *Connector) Identified() <-chan struct{} { return c.known }

// Ready reports whether the connector can receive events: nil, or why
// not (a revoked token, a Socket Mode connection being made anew).
func (c *Connector) Ready(context.Context) error {
	if p := c.down.Load(); p != nil {
		return *p
	}
	return nil
}

func (c *Connector) setDown(err error) {
	if err == nil {
		c.down.Store(nil)
		return
	}
	c.down.Store(&err)
}

// Start checks the bot token (auth.test), then receives events until ctx
// ends: over Socket Mode, or — in HTTP mode — from the routes the caller
// mounts (Routes). It returns an error when Slack refuses the tokens
// (invalid_auth, token_revoked, link_disabled…): the connector is stopped
// and says why. A Connector starts once.
func (c *Connector) Start(ctx context.Context, h connectors.Handler) error {
	if !c.started.CompareAndSwap(false, true) {
		return errors.New("slack: already started")
	}
	c.dispatch.Store(&running{ctx: ctx, h: h})
	c.upOnce.Do(func() { close(c.up) })
	var wg sync.WaitGroup
	defer wg.Wait()
	workCtx, stopWork := context.WithCancel(ctx)
	defer stopWork()
	wg.Go(func() { c.deliver(workCtx) })
	if err := c.whoAmI(ctx); err != nil {
		return c.fatal(err)
	}
	if c.cfg.Mode == ModeHTTP {
		<-ctx.Done()
		return nil
	}
	return c.fatal(c.runSocket(ctx))
}

// whoAmI learns the bot's user id and workspace, retrying while Slack
// cannot be reached; it returns a refusal of the token.
func (c *Connector) whoAmI(ctx context.Context) error {
	backoff := time.Second
	for {
		res, err := c.api.AuthTestContext(ctx)
		if err == nil {
			c.self.Store(&identity{UserID: res.UserID, BotID: res.BotID, Team: res.TeamID})
			c.knownOne.Do(func() { close(c.known) })
			if c.cfg.Mode == ModeHTTP {
				c.setDown(nil)
			} else {
				c.setDown(errors.New("slack: connecting to Socket Mode"))
			}
			return nil
		}
		if fatalAuth(err) || ctx.Err() != nil {
			return err
		}
		c.setDown(fmt.Errorf("slack: cannot reach the Web API (%s); retrying", errorCode(err)))
		c.log.Warn("slack: auth.test failed; retrying", "err", errorCode(err), "in", backoff)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		backoff = min(backoff*2, time.Minute)
	}
}

// fatal turns a refusal of the tokens into the connector's one clear
// error, and marks it down; nil and a shutdown pass.
func (c *Connector) fatal(err error) error {
	if err == nil || errors.Is(err, context.Canceled) {
		return nil
	}
	if fatalAuth(err) {
		err = fmt.Errorf("the %s was refused by Slack (%s): %s", whichToken(err), errorCode(err), tokenAdvice(err))
	}
	c.setDown(err)
	return err
}

// tokenAdvice says what to do about a refused token. The text is shown
// under the connector's name (/readyz, the log), so it does not repeat it.
func tokenAdvice(err error) string {
	switch {
	case errorCode(err) == "link_disabled":
		return "check on the app's page at api.slack.com/apps that Socket Mode is on and the app still installed, then restart"
	case whichToken(err) == "app-level token":
		return "make a new app-level token (xapp-…) with the connections:write scope on the app's page at api.slack.com/apps (Basic Information → App-Level Tokens), set it as slack.app_token, and restart"
	}
	return "make a new bot token (xoxb-…) by reinstalling the app on its page at api.slack.com/apps (OAuth & Permissions), set it as slack.bot_token, and restart"
}

// team is the workspace id, once known.
func (c *Connector) team() string {
	if id := c.self.Load(); id != nil {
		return id.Team
	}
	return ""
}

func (c *Connector) botUser() string {
	if id := c.self.Load(); id != nil {
		return id.UserID
	}
	return ""
}
