package discord

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/opsbot/opsbot/connectors"
)

// Platform is the connector's name, in events, refs and approver rules.
const Platform = "discord"

// Discord's limits (https://discord.com/developers/docs/resources/message,
// .../interactions/message-components).
const (
	// maxContent is what one message's content may hold, in characters.
	maxContent = 2000
	// mentionSlack is kept free of the renderer's pages: a mention grows
	// by one character when rendered (<@id> against the placeholder's two
	// marks), and a page may name a few people.
	mentionSlack = 10
	maxPerRow    = 5
	maxRows      = 5
	maxCustomID  = 100
	// maxThreadName is the longest thread name Discord takes.
	maxThreadName = 100
)

// queueSize is how many gateway messages may wait for the worker.
const queueSize = 1024

// Intents the bot asks for: messages in guild channels and threads,
// direct messages, and the guilds (their GUILD_CREATE and role events,
// which say which role is the bot's own: see botRoles). Message Content
// is privileged and optional: without it Discord still sends the text of
// mentions and direct messages.
const baseIntents = discordgo.IntentsGuilds | discordgo.IntentsGuildMessages | discordgo.IntentsDirectMessages

// Connector is Discord, over one gateway session and the REST API.
type Connector struct {
	cfg  Config
	log  *slog.Logger
	opt  Options
	rest *discordgo.Session // REST calls only: never opened
	// stuckAfter is how long the gateway may stay down with discordgo's
	// session lock held before the session is taken for stuck (see watch).
	stuckAfter time.Duration

	running chan struct{} // closed once events reach the handler
	// queue holds messages from the gateway for work, in their order: a
	// full queue holds the gateway's reading back.
	queue   chan *discordgo.MessageCreate
	runOnce sync.Once
	// clicks are the interactions being handled.
	clicks sync.WaitGroup

	mu      sync.Mutex
	gw      *discordgo.Session // the gateway session now
	botID   string
	handler connectors.Handler
	ctx     context.Context // Start's, for the handlers discordgo calls
	up      bool            // the gateway is connected
	downAt  time.Time       // when it went down
	// channels caches what a channel is (a thread's parent never changes).
	channels map[string]channelInfo
	// pending are mentions in text channels whose thread is not made yet:
	// message id → thread name.
	pending map[string]string
	threads sync.Map // thread id → *sync.Mutex, one creation at a time
	// roles are the bot's managed roles, a mention of which is a
	// mention of the bot.
	roles botRoles
	// custom maps custom_ids too long to carry a button's action and value
	// to them (see customID).
	custom map[string][2]string
}

var (
	_ connectors.Connector = (*Connector)(nil)
	_ interface {
		Ready(context.Context) error
		Running() <-chan struct{}
	} = (*Connector)(nil)
)

// Options are what the composition root adds to the config.
type Options struct {
	// Transport carries the REST calls (the process's API metrics wrap
	// http.DefaultTransport); nil is http.DefaultTransport.
	Transport http.RoundTripper
	Log       *slog.Logger
	// StuckAfter overrides how long a gateway reconnection may hang
	// before the session is replaced (default 2 minutes; tests shorten it).
	StuckAfter time.Duration
}

// New builds the connector; Start connects it.
func New(cfg Config, opt Options) (*Connector, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Token == "" {
		return nil, errors.New("discord.token is empty: set it to the bot's token")
	}
	lim, err := newRouteLimiter(cfg.APIURL, opt.Transport)
	if err != nil {
		return nil, err
	}
	if opt.Log == nil {
		opt.Log = slog.Default()
	}
	if opt.StuckAfter <= 0 {
		opt.StuckAfter = 2 * time.Minute
	}
	opt.Transport = lim
	c := &Connector{cfg: cfg, log: opt.Log, opt: opt, stuckAfter: opt.StuckAfter, running: make(chan struct{}),
		queue: make(chan *discordgo.MessageCreate, queueSize), channels: map[string]channelInfo{}, pending: map[string]string{}, custom: map[string][2]string{},
		roles: botRoles{byGuild: map[string]string{}}}
	c.rest = c.newSession()
	return c, nil
}

// newSession is a discordgo session set up the connector's way.
func (c *Connector) newSession() *discordgo.Session {
	s, _ := discordgo.New("Bot " + c.cfg.Token) // never fails
	s.Client = &http.Client{Transport: c.opt.Transport, Timeout: 20 * time.Second}
	// A 429 comes back as *discordgo.RateLimitError, which the renderer's
	// budget reads: discordgo's own retry sleeps without the context and
	// retries forever.
	s.ShouldRetryOnRateLimit = false
	s.StateEnabled = false
	s.Identify.Compress = false
	s.Compress = false
	s.Identify.Intents = baseIntents
	if c.cfg.MessageContent {
		s.Identify.Intents |= discordgo.IntentsMessageContent
	}
	// discordgo logs through the standard library's log (opsbot's slog
	// handler, which redacts). Its errors carry no payload; its warnings
	// dump gateway frames as bytes no redactor can read, and its debug
	// level prints IDENTIFY with the token.
	s.LogLevel = discordgo.LogError
	return s
}

// Name is "discord".
func (c *Connector) Name() string { return Platform }

// Limits are Discord's: 4,000 characters with Components V2 (less the
// context line's room), 2,000 without (less a little for mentions), one
// edit a second per message, 25 buttons. Route limits are not here: they
// come from Discord's headers, and a call over them is answered
// connectors.RateLimitError.
func (c *Connector) Limits() connectors.Limits {
	text := maxContent
	if c.cfg.V2() {
		text = maxV2Text - maxContextV2
	}
	return connectors.Limits{MaxText: text - mentionSlack, EditInterval: time.Second, MaxButtons: maxPerRow * maxRows}
}

// Running is closed once the gateway is connected and events reach the
// handler.
func (c *Connector) Running() <-chan struct{} { return c.running }

// Ready says whether the gateway is connected.
func (c *Connector) Ready(context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.up {
		return errors.New("not connected to Discord's gateway (reconnecting)")
	}
	return nil
}
