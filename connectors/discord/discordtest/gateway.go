package discordtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/websocket"
)

// Gateway opcodes.
const (
	opDispatch       = 0
	opHeartbeat      = 1
	opIdentify       = 2
	opResume         = 6
	opReconnect      = 7
	opInvalidSession = 9
	opHello          = 10
	opHeartbeatAck   = 11
)

// intentMessageContent is the privileged Message Content intent.
const intentMessageContent = 1 << 15

// HeartbeatInterval is what HELLO asks of the client.
var HeartbeatInterval = 41250 * time.Millisecond

type frame struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d"`
	S  *int            `json:"s,omitempty"`
	T  string          `json:"t,omitempty"`
}

// gateway is the fake's websocket gateway; its state is guarded by the
// Fake's mutex.
type gateway struct {
	f        *Fake
	up       websocket.Upgrader
	session  string
	seq      int
	log      [][]byte // the session's dispatches, for RESUME
	seqs     []int
	conn     *gwConn
	all      []*gwConn
	refuse   bool // answer RESUME with op 9
	identify int
	resume   int
	intents  int
}

// gwConn is one websocket connection with its writer.
type gwConn struct {
	ws   *websocket.Conn
	out  chan []byte
	done chan struct{}
}

func newGateway(f *Fake) *gateway { return &gateway{f: f} }

func (c *gwConn) send(b []byte) bool {
	select {
	case c.out <- b:
		return true
	case <-c.done:
		return false
	default:
		c.ws.UnderlyingConn().Close() // a client this slow is dropped, as Discord does
		return false
	}
}

func (c *gwConn) write() {
	for {
		select {
		case b := <-c.out:
			if c.ws.WriteMessage(websocket.TextMessage, b) != nil {
				return
			}
		case <-c.done:
			return
		}
	}
}

func (g *gateway) serve(w http.ResponseWriter, r *http.Request) {
	ws, err := g.up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &gwConn{ws: ws, out: make(chan []byte, 4096), done: make(chan struct{})}
	go c.write()
	defer func() {
		close(c.done)
		ws.Close()
		g.f.mu.Lock()
		if g.conn == c {
			g.conn = nil
		}
		g.f.changedLocked()
		g.f.mu.Unlock()
	}()
	g.f.mu.Lock()
	g.all = append(g.all, c)
	g.f.mu.Unlock()
	c.send(mustJSON(map[string]any{"op": opHello, "d": map[string]any{"heartbeat_interval": HeartbeatInterval.Milliseconds()}}))
	for {
		_, data, err := ws.ReadMessage()
		if err != nil {
			return
		}
		var fr frame
		if json.Unmarshal(data, &fr) != nil {
			ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4002, "Decode error"), time.Now().Add(time.Second))
			return
		}
		if !g.handle(c, fr, data) {
			return
		}
	}
}

// handle answers one frame; false ends the connection.
func (g *gateway) handle(c *gwConn, fr frame, data []byte) bool {
	f := g.f
	f.mu.Lock()
	defer f.mu.Unlock()
	defer f.changedLocked()
	switch fr.Op {
	case opHeartbeat:
		f.sent = append(f.sent, string(data))
		c.send(mustJSON(map[string]any{"op": opHeartbeatAck}))
	case opIdentify:
		return g.identifyLocked(c, fr.D)
	case opResume:
		return g.resumeLocked(c, fr.D)
	default:
		f.sent = append(f.sent, string(data))
	}
	return true
}

func (g *gateway) identifyLocked(c *gwConn, d json.RawMessage) bool {
	var id struct {
		Token   string `json:"token"`
		Intents int    `json:"intents"`
	}
	json.Unmarshal(d, &id)
	if id.Token != "Bot "+g.f.Token {
		c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4004, "Authentication failed."), time.Now().Add(time.Second))
		return false
	}
	if id.Intents&intentMessageContent != 0 && !g.f.MessageContentAllowed {
		c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4014, "Disallowed intent(s)."), time.Now().Add(time.Second))
		return false
	}
	g.identify++
	g.intents = id.Intents
	g.session, g.seq, g.log, g.seqs = token()[:32], 0, nil, nil
	g.conn = c
	resume := "ws" + strings.TrimPrefix(g.f.srv.URL, "http") + "/resume"
	g.dispatchLocked("READY", map[string]any{"v": 9, "session_id": g.session, "resume_gateway_url": resume,
		"user": map[string]any{"id": g.f.BotID, "username": "opsbot", "bot": true}, "guilds": g.f.guildsLocked(),
		"application": map[string]any{"id": g.f.AppID}})
	g.createGuildsLocked()
	return true
}

func (g *gateway) resumeLocked(c *gwConn, d json.RawMessage) bool {
	var rs struct {
		Token     string `json:"token"`
		SessionID string `json:"session_id"`
		Seq       int    `json:"seq"`
	}
	json.Unmarshal(d, &rs)
	if rs.Token != "Bot "+g.f.Token {
		c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4004, "Authentication failed."), time.Now().Add(time.Second))
		return false
	}
	if g.refuse || rs.SessionID == "" || rs.SessionID != g.session {
		c.send(mustJSON(map[string]any{"op": opInvalidSession, "d": false}))
		return true
	}
	g.resume++
	g.conn = c
	for i, s := range g.seqs {
		if s > rs.Seq {
			c.send(g.log[i])
		}
	}
	g.dispatchLocked("RESUMED", map[string]any{})
	return true
}

// dispatchLocked sends an event to the session: on its connection now, or
// at its RESUME if it is between connections.
func (g *gateway) dispatchLocked(typ string, d any) {
	if g.session == "" {
		return // no session: the event is lost, as on Discord
	}
	g.seq++
	s := g.seq
	b := mustJSON(map[string]any{"op": opDispatch, "t": typ, "s": s, "d": d})
	g.log = append(g.log, b)
	g.seqs = append(g.seqs, s)
	if g.conn != nil {
		g.conn.send(b)
	}
}

func (g *gateway) closeAll() {
	g.f.mu.Lock()
	all := append([]*gwConn(nil), g.all...)
	g.f.mu.Unlock()
	for _, c := range all {
		c.ws.UnderlyingConn().Close()
	}
}

// Drop cuts the gateway connection without a close frame, as a network
// failure does; the session stays resumable.
func (f *Fake) Drop() {
	f.mu.Lock()
	c := f.gw.conn
	f.gw.conn = nil
	f.mu.Unlock()
	if c != nil {
		c.ws.UnderlyingConn().Close()
	}
}

// Reconnect sends op 7: the client should reconnect and resume.
func (f *Fake) Reconnect() { f.control(map[string]any{"op": opReconnect, "d": nil}) }

// InvalidSession sends op 9; resumable false ends the session, so the
// client must IDENTIFY again.
func (f *Fake) InvalidSession(resumable bool) {
	f.mu.Lock()
	if !resumable {
		f.gw.session = ""
	}
	f.mu.Unlock()
	f.control(map[string]any{"op": opInvalidSession, "d": resumable})
}

// RefuseResume makes RESUME answered by op 9 (not resumable).
func (f *Fake) RefuseResume(refuse bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gw.refuse = refuse
}

func (f *Fake) control(v any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gw.conn != nil {
		f.gw.conn.send(mustJSON(v))
	}
}

// Gateway counts: sessions identified and resumed, and whether a
// connection is live now.
type Gateway struct {
	Identifies, Resumes int
	Connected           bool
	Intents             int
}

// Gateway says how the gateway went.
func (f *Fake) Gateway() Gateway {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.GatewayLocked()
}

// GatewayLocked is Gateway for a Wait condition.
func (f *Fake) GatewayLocked() Gateway {
	return Gateway{Identifies: f.gw.identify, Resumes: f.gw.resume, Connected: f.gw.conn != nil, Intents: f.gw.intents}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprint("discordtest: ", err))
	}
	return b
}
