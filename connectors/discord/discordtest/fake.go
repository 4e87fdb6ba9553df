// Package discordtest is a fake Discord for tests and benchmarks: an
// httptest server speaking the REST routes the connector calls and the
// gateway (HELLO, IDENTIFY, READY, heartbeats, RESUME, op 7, op 9) over
// gorilla/websocket, with Discord's limits enforced: 2,000 characters of
// content, the component limits, Components V2's rules (validateV2: no
// content or embeds beside the flag, 40 components, 4,000 characters of
// text displays, a section's accessory), 429 with a JSON retry_after and
// the X-RateLimit-* headers, and the 3-second interaction deadline.
//
// The connector reaches it through discord.api_url (its transport
// rewrites discord.com to that base); the gateway's address is what
// GET /api/v9/gateway answers, and the fake serves /gw/ since discordgo
// appends a slash.
package discordtest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Channel types (Discord's numbers).
const (
	TypeText   = 0
	TypeDM     = 1
	TypeThread = 11
)

// InteractionDeadline is how long Discord waits for a click's
// acknowledgement before the click fails for the person.
const InteractionDeadline = 3 * time.Second

// Fake is a running fake Discord.
type Fake struct {
	// URL is the base to give discord.api_url.
	URL string
	// Token is the bot token it accepts (without "Bot ").
	Token string
	// BotID and AppID are the bot's user id and application id.
	BotID, AppID string
	// MessageContentAllowed says the portal's Message Content toggle is
	// on; an IDENTIFY asking for the intent without it is closed 4014.
	MessageContentAllowed bool

	srv *httptest.Server
	gw  *gateway

	mu       sync.Mutex
	next     int64
	channels map[string]*Channel
	guilds   map[string]*guild
	messages map[string]*Message
	clicks   map[string]*click
	limits   *limits
	calls    []Call
	sent     []string // request bodies, for secret checks
	waiters  []waiter
}

// Channel is a channel, a thread or a DM.
type Channel struct {
	ID, GuildID, Name, ParentID string
	Type                        int
	// Messages are the channel's message ids, in order.
	Messages []string
}

// Message is a message as the fake holds it.
type Message struct {
	ID, ChannelID, AuthorID string
	Bot                     bool
	// Content is the text the message shows: its content, or for a
	// Components V2 message (Flags has FlagComponentsV2) its text
	// displays, a line each, as people read them.
	Content string
	// Flags are the message's flags (ephemeral 64, IS_COMPONENTS_V2).
	Flags           int
	Embeds          []json.RawMessage
	Components      json.RawMessage
	AllowedMentions json.RawMessage
	// Edits are the times of its edits, in order; Created its post.
	Created time.Time
	Edits   []time.Time
	// Ephemeral is a followup only its clicker sees; For is who.
	Ephemeral bool
	For       string
}

// Call is one REST call the fake answered.
type Call struct {
	Method, Route string
	// Major is the channel (guild, interaction) the call acted on: with
	// Route, the rate limit's bucket.
	Major  string
	Status int
	At     time.Time
}

type click struct {
	id, token, messageID, userID string
	at                           time.Time
	acked, late                  bool
	ackType                      int
	payload                      json.RawMessage
}

// New starts a fake Discord with a bot whose token is token; it stops
// with the test.
func New(t interface {
	Cleanup(func())
}, token string) *Fake {
	f := &Fake{Token: token, channels: map[string]*Channel{}, guilds: map[string]*guild{}, messages: map[string]*Message{}, clicks: map[string]*click{},
		next: 1_100_000_000_000_000_000, limits: newLimits()}
	f.BotID = f.id()
	f.AppID = f.BotID
	f.gw = newGateway(f)
	mux := http.NewServeMux()
	mux.HandleFunc("/gw/", f.gw.serve)
	mux.HandleFunc("/resume", f.gw.serve)
	mux.HandleFunc("/api/v9/", f.serveREST)
	f.srv = httptest.NewServer(mux)
	f.URL = f.srv.URL + "/"
	t.Cleanup(f.Close)
	return f
}

// Close stops the fake.
func (f *Fake) Close() {
	f.gw.closeAll()
	f.srv.CloseClientConnections()
	f.srv.Close()
}

// id is a new snowflake.
func (f *Fake) id() string {
	f.next++
	return strconv.FormatInt(f.next, 10)
}

func token() string {
	b := make([]byte, 24)
	rand.Read(b)
	return "aW50ZXJhY3Rpb246" + hex.EncodeToString(b)
}

// AddChannel makes a text channel in guild and returns its id. The bot
// is in every guild that has a channel, with its managed role (see
// BotRole).
func (f *Fake) AddChannel(guild, name string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	defer f.changedLocked()
	c := &Channel{ID: f.id(), GuildID: guild, Name: name, Type: TypeText}
	f.channels[c.ID] = c
	f.guildLocked(guild)
	return c.ID
}

// AddDM makes a direct-message channel and returns its id.
func (f *Fake) AddDM() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := &Channel{ID: f.id(), Type: TypeDM}
	f.channels[c.ID] = c
	return c.ID
}

// AddThread makes a thread someone opened in channel, from no message.
func (f *Fake) AddThread(channel, name string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.channels[channel]
	c := &Channel{ID: f.id(), GuildID: p.GuildID, Name: name, Type: TypeThread, ParentID: channel}
	f.channels[c.ID] = c
	return c.ID
}

// Channel returns a copy of channel id.
func (f *Fake) Channel(id string) (Channel, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.channels[id]
	if !ok {
		return Channel{}, false
	}
	cp := *c
	cp.Messages = append([]string(nil), c.Messages...)
	return cp, true
}

// Message returns a copy of message id.
func (f *Fake) Message(id string) (Message, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.messages[id]
	if !ok {
		return Message{}, false
	}
	return *m, true
}

// Messages are the messages of channel (a thread's included), in order.
func (f *Fake) Messages(channel string) []Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.channels[channel]
	if !ok {
		return nil
	}
	out := make([]Message, 0, len(c.Messages))
	for _, id := range c.Messages {
		out = append(out, *f.messages[id])
	}
	return out
}

// Calls are the REST calls answered so far.
func (f *Fake) Calls() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Call(nil), f.calls...)
}

// Sent is every request body and gateway frame the client sent but
// IDENTIFY and RESUME, which carry the token by design.
func (f *Fake) Sent() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.sent...)
}

// Acked says whether the click interaction was acknowledged in time, and
// with which response type.
func (f *Fake) Acked(interaction string) (inTime bool, typ int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.clicks[interaction]
	if !ok {
		return false, 0
	}
	return c.acked && !c.late, c.ackType
}

// waiter is a test waiting for the fake's state to satisfy a condition.
type waiter struct {
	cond func() bool
	ch   chan struct{}
}

// Wait blocks until cond (called with the fake's lock held, so it may
// read its state through the *Locked methods) holds, or timeout passes;
// it reports whether cond held. timeout is a guard against a hang.
func (f *Fake) Wait(timeout time.Duration, cond func(f *Fake) bool) bool {
	f.mu.Lock()
	if cond(f) {
		f.mu.Unlock()
		return true
	}
	w := waiter{cond: func() bool { return cond(f) }, ch: make(chan struct{})}
	f.waiters = append(f.waiters, w)
	f.mu.Unlock()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-w.ch:
		return true
	case <-t.C:
		return false
	}
}

// changedLocked wakes the waiters whose condition now holds.
func (f *Fake) changedLocked() {
	kept := f.waiters[:0]
	for _, w := range f.waiters {
		if w.cond() {
			close(w.ch)
		} else {
			kept = append(kept, w)
		}
	}
	f.waiters = kept
}

// MessagesLocked is Messages for a Wait condition.
func (f *Fake) MessagesLocked(channel string) []Message {
	c, ok := f.channels[channel]
	if !ok {
		return nil
	}
	out := make([]Message, 0, len(c.Messages))
	for _, id := range c.Messages {
		out = append(out, *f.messages[id])
	}
	return out
}

// MessageLocked is Message for a Wait condition.
func (f *Fake) MessageLocked(id string) (Message, bool) {
	m, ok := f.messages[id]
	if !ok {
		return Message{}, false
	}
	return *m, true
}

// ThreadText is every bot message's content in channel joined by
// newlines, for a Wait condition.
func (f *Fake) ThreadTextLocked(channel string) string {
	var b strings.Builder
	for _, m := range f.MessagesLocked(channel) {
		if m.Bot {
			b.WriteString(m.Content + "\n")
		}
	}
	return b.String()
}

// CallsLocked is Calls for a Wait condition.
func (f *Fake) CallsLocked() []Call { return f.calls }
