package slack

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/opsbot/opsbot/connectors"
)

// HTTP mode: Slack posts events to /slack/events and clicks to
// /slack/actions. Those two routes are authenticated by Slack's v0
// signature alone (HMAC-SHA256 of "v0:timestamp:body" with the signing
// secret, at most 5 minutes old), never by the web chat's API key; a
// request with a bad, stale or already-seen signature is answered 401
// and nothing of it is stored or run.

// maxBody bounds a request body: Slack's are a few kilobytes.
const maxBody = 1 << 20

// Routes mounts HTTP mode's routes on mux; in socket mode it mounts none.
func (c *Connector) Routes(mux *http.ServeMux) {
	if c.cfg.Mode != ModeHTTP {
		return
	}
	mux.HandleFunc("POST /slack/events", c.serveEvents)
	mux.HandleFunc("POST /slack/actions", c.serveActions)
}

// verified reads and authenticates a request's body; it has answered the
// request (401) when it returns false.
func (c *Connector) verified(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		http.Error(w, "unreadable body", http.StatusBadRequest)
		return nil, false
	}
	sv, err := slack.NewSecretsVerifier(r.Header, c.cfg.SigningSecret)
	if err == nil {
		sv.Write(body)
		err = sv.Ensure()
	}
	if err != nil || !c.sigs.first(r.Header.Get("X-Slack-Signature"), time.Now()) {
		http.Error(w, "invalid signature", http.StatusUnauthorized)
		return nil, false
	}
	if c.dispatch.Load() == nil || c.self.Load() == nil {
		// Not started yet: Slack retries.
		http.Error(w, "starting", http.StatusServiceUnavailable)
		return nil, false
	}
	return body, true
}

// serveEvents is POST /slack/events: url_verification is answered with
// its challenge; an event is queued, then acknowledged (200).
func (c *Connector) serveEvents(w http.ResponseWriter, r *http.Request) {
	body, ok := c.verified(w, r)
	if !ok {
		return
	}
	var cb callback
	if err := json.Unmarshal(body, &cb); err != nil {
		http.Error(w, "not an event", http.StatusBadRequest)
		return
	}
	if cb.Type == "url_verification" {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, cb.Challenge)
		return
	}
	if cb.Type == "event_callback" {
		if ev, ok := c.message(cb); ok {
			c.acceptHTTP(w, ev)
			return
		}
	}
	w.WriteHeader(http.StatusOK)
}

// httpAckWait bounds how long an HTTP delivery waits for the Handler:
// Slack gives up on an answer after 3 s, and delivers the event again.
const httpAckWait = 2500 * time.Millisecond

// acceptHTTP hands ev to the Handler and answers Slack 200 once it is on
// record; 503 otherwise, so that Slack delivers it again.
func (c *Connector) acceptHTTP(w http.ResponseWriter, ev connectors.Event) {
	done := make(chan error, 1)
	c.accept(inbound{ev: ev, ack: func(err error) { done <- err }})
	t := time.NewTimer(httpAckWait)
	defer t.Stop()
	select {
	case err := <-done:
		if err == nil {
			w.WriteHeader(http.StatusOK)
			return
		}
	case <-t.C:
	}
	http.Error(w, "not recorded; deliver it again", http.StatusServiceUnavailable)
}

// serveActions is POST /slack/actions (a form with the payload).
func (c *Connector) serveActions(w http.ResponseWriter, r *http.Request) {
	body, ok := c.verified(w, r)
	if !ok {
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil || form.Get("payload") == "" {
		http.Error(w, "no payload", http.StatusBadRequest)
		return
	}
	if ev, ok := c.click([]byte(form.Get("payload"))); ok {
		c.acceptHTTP(w, ev)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// seenSignatures remembers the signatures of the last 5 minutes: a
// request replayed within its validity is refused (Slack's own retries
// are signed anew).
type seenSignatures struct {
	mu   sync.Mutex
	seen map[string]time.Time
}

func newSeenSignatures() *seenSignatures { return &seenSignatures{seen: map[string]time.Time{}} }

// first reports whether sig is new, and remembers it.
func (s *seenSignatures) first(sig string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, at := range s.seen {
		if now.Sub(at) > 6*time.Minute {
			delete(s.seen, k)
		}
	}
	if _, ok := s.seen[sig]; ok {
		return false
	}
	s.seen[sig] = now
	return true
}
