// Package slackfake is a fake Slack for tests: an httptest server that
// speaks the Web API methods the connector calls and Socket Mode (hello,
// envelopes, acks, disconnect, pings), and enforces Slack's real limits:
// per-tier 429s with Retry-After, msg_too_long, invalid_blocks, stream
// expiry, streaming_state_conflict, missing_recipient_*, and tokens in
// their place (the form body for the bot token, a Bearer header for the
// app-level token). The state people would see — threads, messages,
// ephemeral replies — can be read back.
package slackfake

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Fixed ids of the fake workspace.
const (
	Team     = "T0FAKE"
	BotUser  = "U0OPSBOT"
	BotID    = "B0OPSBOT"
	BotToken = "xoxb-1234567890-1234567890123-FakeBotTokenAbCdEf0123"
	AppToken = "xapp-1-A0FAKE-1234567890-fakeapptoken0123456789abcdef"
)

// StreamLifetime is how long a native stream takes appends after it
// started, whatever is appended (slack-python-sdk #1859).
const StreamLifetime = 5 * time.Minute

// Server is the fake Slack.
type Server struct {
	// URL is the Web API base, ending in /api/.
	URL string
	// Now is the fake's clock (default time.Now; inside a synctest bubble
	// that is the bubble's clock).
	Now func() time.Time
	// PingEvery is how often the socket pings (default 2 s).
	PingEvery time.Duration

	srv      *httptest.Server
	handler  http.Handler
	upgrader websocket.Upgrader

	mu        sync.Mutex
	seq       int
	channels  map[string][]*Message // by channel, in order
	ephemeral []Ephemeral
	statuses  []Status
	reacted   []Reaction
	assistant []AssistantThread
	// noAssistant: the app lacks assistant:write.
	noAssistant bool
	users       map[string]string   // id → name
	groups      map[string][]string // user group id → members
	freePlan    bool
	revoked     string // an error code every call answers, e.g. token_revoked
	force429    []time.Duration
	calls       map[string]int
	served429   int
	sent        []string
	windows     map[string][]time.Time
	socket      socketState
	changed     chan struct{}
	refusals    map[string]int
}

// New starts a fake Slack on a loopback port; Close stops it.
func New() *Server {
	s := NewLocal()
	s.srv = httptest.NewServer(s.handler)
	s.URL = s.srv.URL + "/api/"
	return s
}

// NewLocal is a fake Slack without a listener, reached through Transport
// only: a test in a synctest bubble uses it, so that every request runs
// in the bubble, on its clock. It has no Socket Mode.
func NewLocal() *Server {
	s := &Server{Now: time.Now, PingEvery: 2 * time.Second, channels: map[string][]*Message{}, users: map[string]string{},
		groups: map[string][]string{}, calls: map[string]int{}, refusals: map[string]int{}, windows: map[string][]time.Time{}}
	s.socket.init()
	// Slack's clients send Origin: https://api.slack.com.
	s.upgrader.CheckOrigin = func(*http.Request) bool { return true }
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", s.serveAPI)
	mux.HandleFunc("/socket", s.serveSocket)
	s.handler = mux
	s.URL = "http://slack.local/api/"
	return s
}

// Transport serves requests in process, on the caller's goroutine.
func (s *Server) Transport() http.RoundTripper { return inProcess{s.handler} }

type inProcess struct{ h http.Handler }

func (t inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	w := httptest.NewRecorder()
	t.h.ServeHTTP(w, r)
	res := w.Result()
	res.Request = r
	return res, nil
}

// Close stops the server and every socket.
func (s *Server) Close() {
	s.socket.closeAll()
	if s.srv != nil {
		s.srv.Close()
	}
}

// AddUser names a person of the workspace (users.info).
func (s *Server) AddUser(id, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[id] = name
}

// SetGroup makes members the members of user group id.
func (s *Server) SetGroup(id string, members ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.groups[id] = members
}

// FreePlan makes the workspace's plan one without user groups:
// usergroups.users.list answers plan_upgrade_required.
func (s *Server) FreePlan() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.freePlan = true
}

// Refuse makes every call answer code from now on (token_revoked,
// invalid_auth, link_disabled) — a token revoked or an app unlinked.
func (s *Server) Refuse(code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revoked = code
}

// RateLimit makes the next Web API call answer 429 asking to wait d (no
// Retry-After header when d is 0).
func (s *Server) RateLimit(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.force429 = append(s.force429, d)
}

// Served429 is how many 429s the fake has answered.
func (s *Server) Served429() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.served429
}

// Refusals is how many calls the fake refused with error code.
func (s *Server) Refusals(code string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refusals[code]
}

// Methods are the Web API methods called so far.
func (s *Server) Methods() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for m := range s.calls {
		out = append(out, m)
	}
	return out
}

// Calls is how many calls of method the fake has answered.
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// Sent is every request body and socket frame the connector sent, with
// the bot token's form field left out (it belongs there).
func (s *Server) Sent() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.sent...)
}

// nextTS is a fresh message timestamp; s.mu is held.
func (s *Server) nextTS() string {
	s.seq++
	return fmt.Sprintf("%d.%06d", 1700000000+s.seq, s.seq)
}

// Message is a message in a channel as the fake keeps it.
type Message struct {
	TS, Thread, Channel, User string
	// Text is the message's text field (the notification fallback).
	Text string
	// Blocks are its Block Kit blocks, decoded.
	Blocks []Block
	// Markdown is what native streaming wrote into it.
	Markdown string
	// Streaming is set from chat.startStream to chat.stopStream (or the
	// stream's end); Started is when it started.
	Streaming bool
	Started   time.Time
	// Stopped says chat.stopStream ended the stream: its task cards can
	// no longer change (StoppedOpen).
	Stopped bool
	// Updates counts chat.update calls on it; Appends chat.appendStream.
	Updates, Appends int
	// Bot says the bot posted it.
	Bot bool
	// Broadcast says a thread reply was posted with reply_broadcast: Slack
	// shows it in the channel too, and notifies as a channel message.
	Broadcast bool
	// Tasks are the task cards streamed into it, in order of their first
	// update, or those of the task_card blocks it was posted or last
	// updated with.
	Tasks []Task
	// rawBlocks are the blocks it was posted or last updated with, as
	// sent (conversations.replies returns them).
	rawBlocks string
	// Reactions are the bot's reactions on it now (reactions.go).
	Reactions []string
}

// Shown is the text people see in the message: streamed markdown, then
// each section's or markdown block's text, Slack's escapes undone.
func (m Message) Shown() string {
	var b strings.Builder
	b.WriteString(m.Markdown)
	for _, bl := range m.Blocks {
		switch {
		case bl.Type == "section" && bl.Text != nil:
			b.WriteString(unescape(bl.Text.Text))
		case bl.Type == "markdown" && bl.Text != nil:
			b.WriteString(bl.Text.Text)
		}
	}
	if b.Len() == 0 {
		return unescape(m.Text)
	}
	return b.String()
}

// Context is the text of the message's context blocks.
func (m Message) Context() string {
	var parts []string
	for _, bl := range m.Blocks {
		if bl.Type == "context" {
			for _, e := range bl.Elements {
				parts = append(parts, unescape(e.Text))
			}
		}
	}
	return strings.Join(parts, "\n")
}

// Buttons are the action ids of the message's buttons.
func (m Message) Buttons() []string {
	var out []string
	for _, bl := range m.Blocks {
		if bl.Type == "actions" {
			for _, e := range bl.Elements {
				out = append(out, e.ActionID)
			}
		}
	}
	return out
}

// Ephemeral is a reply only one person sees.
type Ephemeral struct {
	Channel, Thread, User, Text string
}

// Status is an assistant.threads.setStatus call, at the fake's clock.
type Status struct {
	Channel, Thread, Status string
	At                      time.Time
}

func unescape(s string) string {
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(s)
}

// Message returns message ts of channel as it is now.
func (s *Server) Message(channel, ts string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.find(channel, ts); m != nil {
		return *m, true
	}
	return Message{}, false
}

// Thread returns the messages of a thread of channel, its root first.
func (s *Server) Thread(channel, thread string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, m := range s.channels[channel] {
		if m.TS == thread || m.Thread == thread {
			c := *m
			c.Tasks = slices.Clone(m.Tasks)
			out = append(out, c)
		}
	}
	return out
}

// Ephemerals returns the ephemeral replies so far.
func (s *Server) Ephemerals() []Ephemeral {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Ephemeral(nil), s.ephemeral...)
}

// Statuses returns the assistant.threads.setStatus calls so far.
func (s *Server) Statuses() []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Status(nil), s.statuses...)
}

// EndStreams ends every live stream, as Slack does after a few minutes.
func (s *Server) EndStreams() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, msgs := range s.channels {
		for _, m := range msgs {
			m.Streaming = false
		}
	}
}

func (s *Server) find(channel, ts string) *Message {
	for _, m := range s.channels[channel] {
		if m.TS == ts {
			return m
		}
	}
	return nil
}
