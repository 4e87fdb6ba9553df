package slackfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// socketState is Socket Mode's side of the fake: the open connections,
// envelopes sent and their acknowledgements.
type socketState struct {
	mu        sync.Mutex
	conns     []*wsConn
	connected chan struct{} // receives on each new connection (buffered)
	pending   []Envelope    // sent while no connection was open
	sentAt    map[string]time.Time
	acks      map[string]time.Duration
	ackWait   map[string]chan struct{}
	seq       int
}

type wsConn struct {
	ws   *websocket.Conn
	wmu  sync.Mutex
	done chan struct{}
}

func (c *wsConn) write(v any) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.ws.SetWriteDeadline(time.Now().Add(10 * time.Second))
	return c.ws.WriteJSON(v)
}

func (st *socketState) init() {
	st.connected = make(chan struct{}, 64)
	st.sentAt, st.acks, st.ackWait = map[string]time.Time{}, map[string]time.Duration{}, map[string]chan struct{}{}
}

// Envelope is one Socket Mode request.
type Envelope struct {
	EnvelopeID             string          `json:"envelope_id"`
	Type                   string          `json:"type"`
	Payload                json.RawMessage `json:"payload"`
	AcceptsResponsePayload bool            `json:"accepts_response_payload"`
	RetryAttempt           int             `json:"retry_attempt"`
	RetryReason            string          `json:"retry_reason"`
}

// connectionsOpen is apps.connections.open: the app-level token comes as
// a Bearer header; s.mu is held.
func (s *Server) connectionsOpen(r *http.Request) reply {
	auth := r.Header.Get("Authorization")
	if r.PostForm.Get("token") != "" {
		return fail("not_allowed_token_type")
	}
	if auth != "Bearer "+AppToken {
		return fail("invalid_auth")
	}
	if s.revoked != "" {
		return fail(s.revoked)
	}
	return reply{"ok": true, "url": "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/socket"}
}

// Connected receives once for each Socket Mode connection opened.
func (s *Server) Connected() <-chan struct{} { return s.socket.connected }

func (s *Server) serveSocket(w http.ResponseWriter, r *http.Request) {
	ws, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &wsConn{ws: ws, done: make(chan struct{})}
	st := &s.socket
	c.write(map[string]any{"type": "hello", "num_connections": 1, "connection_info": map[string]any{"app_id": "A0FAKE"},
		"debug_info": map[string]any{"host": "fake", "approximate_connection_time": 3600}})
	st.mu.Lock()
	st.conns = append(st.conns, c)
	pending := st.pending
	st.pending = nil
	st.mu.Unlock()
	st.connected <- struct{}{}
	for _, e := range pending {
		s.deliver(e)
	}
	go s.ping(c)
	s.readAcks(c)
}

// ping pings a connection every PingEvery, as Slack does.
func (s *Server) ping(c *wsConn) {
	t := time.NewTicker(s.PingEvery)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
			c.wmu.Lock()
			err := c.ws.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(5*time.Second))
			c.wmu.Unlock()
			if err != nil {
				return
			}
		}
	}
}

// readAcks reads the client's frames: acknowledgements.
func (s *Server) readAcks(c *wsConn) {
	st := &s.socket
	defer func() {
		close(c.done)
		c.ws.Close()
		st.mu.Lock()
		for i, o := range st.conns {
			if o == c {
				st.conns = append(st.conns[:i], st.conns[i+1:]...)
				break
			}
		}
		st.mu.Unlock()
	}()
	for {
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.sent = append(s.sent, string(data))
		s.mu.Unlock()
		var ack struct {
			EnvelopeID string `json:"envelope_id"`
		}
		if json.Unmarshal(data, &ack) != nil || ack.EnvelopeID == "" {
			continue
		}
		st.mu.Lock()
		if at, ok := st.sentAt[ack.EnvelopeID]; ok {
			if _, dup := st.acks[ack.EnvelopeID]; !dup {
				st.acks[ack.EnvelopeID] = time.Since(at)
				if ch := st.ackWait[ack.EnvelopeID]; ch != nil {
					close(ch)
				}
			}
		}
		st.mu.Unlock()
	}
}

// Send sends an envelope of type (events_api, interactive) with payload;
// it is queued until a connection is open. It returns the envelope's id.
func (s *Server) Send(kind string, payload any, retryAttempt int) string {
	raw, _ := json.Marshal(payload)
	st := &s.socket
	st.mu.Lock()
	st.seq++
	e := Envelope{EnvelopeID: fmt.Sprintf("env-%d", st.seq), Type: kind, Payload: raw, RetryAttempt: retryAttempt}
	if retryAttempt > 0 {
		e.RetryReason = "timeout"
	}
	st.ackWait[e.EnvelopeID] = make(chan struct{})
	st.mu.Unlock()
	s.deliver(e)
	return e.EnvelopeID
}

// Resend delivers an envelope again with a new id and the next retry
// attempt, as Slack does when an ack did not come in time.
func (s *Server) Resend(kind string, payload any, attempt int) string {
	return s.Send(kind, payload, attempt)
}

func (s *Server) deliver(e Envelope) {
	st := &s.socket
	st.mu.Lock()
	if len(st.conns) == 0 {
		st.pending = append(st.pending, e)
		st.mu.Unlock()
		return
	}
	c := st.conns[len(st.conns)-1]
	st.sentAt[e.EnvelopeID] = time.Now()
	st.mu.Unlock()
	if c.write(e) != nil {
		st.mu.Lock()
		st.pending = append(st.pending, e)
		st.mu.Unlock()
	}
}

// Acked returns a channel closed when envelope id is acknowledged.
func (s *Server) Acked(id string) <-chan struct{} {
	st := &s.socket
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.ackWait[id]
}

// AckLatencies are the times from sending each acknowledged envelope to
// its ack.
func (s *Server) AckLatencies() []time.Duration {
	st := &s.socket
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []time.Duration
	for _, d := range st.acks {
		out = append(out, d)
	}
	return out
}

// Disconnect asks every open connection to go (Slack's disconnect
// envelope, as before a server's restart), then closes it.
func (s *Server) Disconnect(reason string) {
	st := &s.socket
	st.mu.Lock()
	conns := append([]*wsConn(nil), st.conns...)
	st.conns = nil
	st.mu.Unlock()
	for _, c := range conns {
		c.write(map[string]any{"type": "disconnect", "reason": reason, "debug_info": map[string]any{"host": "fake"}})
		c.ws.Close()
	}
}

// DropSockets closes every connection without a word (a network loss).
func (s *Server) DropSockets() {
	st := &s.socket
	st.mu.Lock()
	conns := append([]*wsConn(nil), st.conns...)
	st.conns = nil
	st.mu.Unlock()
	for _, c := range conns {
		c.ws.Close()
	}
}

func (st *socketState) closeAll() {
	st.mu.Lock()
	conns := st.conns
	st.conns = nil
	st.mu.Unlock()
	for _, c := range conns {
		c.ws.Close()
	}
}
