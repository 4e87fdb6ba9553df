package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/opsbot/opsbot/connectors"
)

// Handler serves the chat page at /, its files under /assets/, and the
// API under /api/ (docs/WEB_API.md). Mount it at "/" on the server that
// also serves /healthz, /readyz and /metrics.
func (c *Connector) Handler() http.Handler {
	api := http.NewServeMux()
	api.HandleFunc("GET /api/channels", c.listChannels)
	api.HandleFunc("GET /api/channels/{channel}/threads", c.listThreads)
	api.HandleFunc("GET /api/threads/{thread}/messages", c.listMessages)
	api.HandleFunc("GET /api/threads/{thread}/postmortem.md", c.getPostmortem) // postmortem.go
	api.HandleFunc("GET /api/messages/{id}", c.getMessage)
	api.HandleFunc("POST /api/messages", c.postMessage)
	api.HandleFunc("POST /api/actions", c.click)
	api.HandleFunc("GET /api/events", c.events)
	api.HandleFunc("GET /api/models", c.listModels)
	api.HandleFunc("GET /api/me", c.me)
	api.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, http.StatusNotFound, "no such API endpoint: see docs/WEB_API.md")
	})
	mux := http.NewServeMux()
	mux.Handle("/api/", c.guard(api))
	mux.Handle("GET /{$}", pageHandler())
	mux.Handle("GET /assets/", assetHandler())
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v) // the client went away if this fails
}

// apiError is every error response's body.
type apiError struct {
	Error     string `json:"error"`
	RequestID string `json:"request_id"`
}

func writeError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	writeJSON(w, status, apiError{Error: msg, RequestID: requestIDOf(r)})
}

// statusOf maps the hub's errors to HTTP statuses.
func statusOf(err error) int {
	switch {
	case errors.Is(err, errNoMessage), errors.Is(err, errNoThread), errors.Is(err, errNoChannel):
		return http.StatusNotFound
	case errors.Is(err, errBotDown):
		return http.StatusServiceUnavailable
	}
	if _, ok := unavailable(err); ok {
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// storeUnavailable is the store's error for a write the disk refused
// (full, read-only); the web package does not import the store.
type storeUnavailable interface{ StoreUnavailable() string }

// unavailable returns the words of a refused write, if err is one.
func unavailable(err error) (string, bool) {
	var u storeUnavailable
	if errors.As(err, &u) {
		return u.StoreUnavailable(), true
	}
	return "", false
}

// notSaved is what the poster of a message that could not be saved is
// told: it is not kept, and why in words.
func notSaved(err error, rid string) error {
	if why, ok := unavailable(err); ok {
		return fmt.Errorf("your message was not saved, and opsbot did not act on it: %s. Send it again once that is fixed", why)
	}
	return fmt.Errorf("your message was not saved, and opsbot did not act on it; send it again, and tell its operator if it persists (request id %s)", rid)
}

// decode reads a JSON body of at most 1 MiB, refusing unknown fields so a
// script's typo is an error rather than silently ignored.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeError(w, r, http.StatusBadRequest, "bad JSON body: "+err.Error())
		return false
	}
	return true
}

func (c *Connector) listChannels(w http.ResponseWriter, r *http.Request) {
	chans, seq := c.hub.channelList()
	writeJSON(w, http.StatusOK, map[string]any{"channels": chans, "bot": BotName, "seq": seq})
}

// pageOf reads a list's ?limit= and ?cursor=, or answers 400.
func pageOf(w http.ResponseWriter, r *http.Request) (page, bool) {
	p, err := parsePage(r.URL.Query().Get("limit"), r.URL.Query().Get("cursor"))
	if err != nil {
		writeError(w, r, http.StatusBadRequest, err.Error())
		return p, false
	}
	return p, true
}

// listPage is a page of a list: the items under their key, the seq the
// list was taken at, and next_cursor when more follow.
func listPage(key string, items any, seq uint64, next string) map[string]any {
	out := map[string]any{key: items, "seq": seq}
	if next != "" {
		out["next_cursor"] = next
	}
	return out
}

func (c *Connector) listThreads(w http.ResponseWriter, r *http.Request) {
	p, ok := pageOf(w, r)
	if !ok {
		return
	}
	threads, seq, next, err := c.hub.threadList(r.Context(), r.PathValue("channel"), p)
	if err != nil {
		c.writeHubError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listPage("threads", nonNil(threads), seq, next))
}

func (c *Connector) listMessages(w http.ResponseWriter, r *http.Request) {
	p, ok := pageOf(w, r)
	if !ok {
		return
	}
	msgs, seq, next, err := c.hub.threadMessages(r.Context(), r.PathValue("thread"), p)
	if err != nil {
		c.writeHubError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listPage("messages", nonNil(msgs), seq, next))
}

func (c *Connector) getMessage(w http.ResponseWriter, r *http.Request) {
	m, err := c.hub.message(r.Context(), r.PathValue("id"))
	if err != nil {
		c.writeHubError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, m)
}

// writeHubError answers with the hub's error; one the client cannot act
// on (the database failed) is logged and answered in general words.
func (c *Connector) writeHubError(w http.ResponseWriter, r *http.Request, err error) {
	status := statusOf(err)
	if status == http.StatusInternalServerError {
		c.logger().Error("web: a read failed", "request_id", requestIDOf(r), "err", err)
		writeError(w, r, status, "opsbot could not read its chat archive; try again, and tell its operator if it persists (request id "+requestIDOf(r)+")")
		return
	}
	writeError(w, r, status, err.Error())
}

// nonNil makes an empty list [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func (c *Connector) listModels(w http.ResponseWriter, r *http.Request) {
	models := []string{}
	if c.Models != nil {
		models = append(models, c.Models()...)
	}
	writeJSON(w, http.StatusOK, map[string]any{"models": models})
}

// postRequest is the body of POST /api/messages.
type postRequest struct {
	Channel string `json:"channel"`
	Thread  string `json:"thread"`
	User    string `json:"user"`
	Text    string `json:"text"`
	// note is shown under the message: RedactedNote when Text was
	// redacted.
	note string
}

// RedactedNote is shown under a person's message in which the redactor
// replaced something: what happened, and what to do.
const RedactedNote = "opsbot replaced what looked like a secret with [redacted …] before showing or keeping this message; " +
	"the original is stored nowhere. If it was a real credential, treat it as exposed and rotate it."

// postResult answers POST /api/messages.
type postResult struct {
	ID      string `json:"id"`
	Channel string `json:"channel"`
	Thread  string `json:"thread"`
	Seq     uint64 `json:"seq"`
	// ForBot says the message went to the bot as an event.
	ForBot    bool   `json:"for_bot"`
	RequestID string `json:"request_id"`
	// Redacted says the text was redacted before it was kept.
	Redacted bool `json:"redacted,omitempty"`
}

// me answers GET /api/me: who the client is and how that is known, so
// the page asks for a name only where the name is self-chosen.
func (c *Connector) me(w http.ResponseWriter, r *http.Request) {
	id := identityOf(r)
	writeJSON(w, http.StatusOK, map[string]any{"user": id.name, "auth": id.kind.String(),
		"self_named": id.kind == selfNamed, "can_approve": id.kind != sharedKey})
}

func (c *Connector) postMessage(w http.ResponseWriter, r *http.Request) {
	var req postRequest
	if !decode(w, r, &req) {
		return
	}
	id, msg := c.named(identityOf(r), req.User)
	if msg != "" {
		writeError(w, r, statusOfName(id), msg)
		return
	}
	req.User = id.name
	if msg := c.checkPost(req); msg != "" {
		writeError(w, r, http.StatusBadRequest, msg)
		return
	}
	if ok, after := c.limits.allow(id.rateKey()); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(after)))
		writeError(w, r, http.StatusTooManyRequests, fmt.Sprintf("too many posts from you: wait %d s (Retry-After) and send it again", retryAfterSeconds(after)))
		return
	}
	if why := c.full(req); why != "" {
		w.Header().Set("Retry-After", strconv.Itoa(int(fullRetryAfter.Seconds())))
		writeError(w, r, http.StatusTooManyRequests, fmt.Sprintf("not taken: %s (Retry-After: %d s)", why, int(fullRetryAfter.Seconds())))
		return
	}
	if c.Redact != nil {
		if red := c.Redact(req.Text); red != req.Text {
			req.Text, req.note = red, RedactedNote
		}
	}
	res, status, err := c.addOnce(r, id, req)
	if err != nil {
		writeError(w, r, status, err.Error())
		return
	}
	// A retry's message goes to the bot again: its event id is the
	// message's, so the bot drops it if the first copy is on record, and
	// takes it if a crash came between the message and its record.
	if res.ForBot {
		if err := c.dispatch(connectors.Event{ID: res.ID, Kind: connectors.EventMessage, Channel: res.Channel, Thread: res.Thread,
			User: c.user(id), Text: stripMention(req.Text), Mention: mentions(req.Text), MentionsOthers: mentionsOthers(req.Text)}); err != nil {
			c.logger().Error("web: a message for the bot was not taken", "id", res.ID, "request_id", requestIDOf(r), "err", err)
			writeError(w, r, http.StatusServiceUnavailable, notTaken(
				"your message is in the thread, but opsbot did not take it and will not answer it", err))
			return
		}
	}
	writeJSON(w, status, res)
}

// fullRetryAfter is the Retry-After of a post the bot is too busy to take.
const fullRetryAfter = 10 * time.Second

// full says why the bot would turn this post away now, or "": only a
// message for the bot can be.
func (c *Connector) full(req postRequest) string {
	if c.Full == nil || !c.hub.forBot(req.Channel, req.Thread, req.Text) {
		return ""
	}
	return c.Full(req.Channel, req.Thread)
}

// statusOfName: a bad chosen name is a bad request, another name than the
// one signed in is forbidden.
func statusOfName(id identity) int {
	if id.kind == selfNamed {
		return http.StatusBadRequest
	}
	return http.StatusForbidden
}

// addOnce adds a person's message, unless the client already posted it
// with the same X-Request-Id (before a restart too): then it returns the
// first answer with 200, or 409 when that id came with another message.
// postMu makes the lookup and the record one step, so two copies that
// arrive together still make one message. The request is saved in the
// message's own record, so no crash can keep one without the other.
func (c *Connector) addOnce(r *http.Request, id identity, req postRequest) (res postResult, status int, err error) {
	c.postMu.Lock()
	defer c.postMu.Unlock()
	rid := requestIDOf(r)
	var request PostRequest
	if r.Header.Get(HeaderRequestID) == rid { // the client's own id: a retry can send it again
		request = PostRequest{Key: requestKey(id, rid), Digest: digestOf(req)}
		if res, same, ok := c.requests.get(request.Key, request.Digest); ok {
			if !same {
				return res, http.StatusConflict, fmt.Errorf("X-Request-Id %s was already used for another message: "+
					"send a new X-Request-Id with each new message, and the same one only to retry the same message", rid)
			}
			res.RequestID, res.Redacted = rid, req.note != ""
			return res, http.StatusOK, nil
		}
	}
	v, forBot, err := c.hub.add(r.Context(), post{channel: req.Channel, thread: req.Thread, user: req.User,
		body: body{Text: req.Text, Context: req.note}, botUp: c.botUp(), request: request})
	if v.ID == "" {
		if _, down := unavailable(err); down || statusOf(err) == http.StatusInternalServerError {
			c.logger().Error("web: a message could not be saved", "request_id", rid, "err", err)
			return res, http.StatusServiceUnavailable, notSaved(err, rid)
		}
		return res, statusOf(err), err
	}
	if err != nil { // shown, but not archived: the poster is told, and the bot never acts on it
		c.logger().Error("web: a message was posted but not archived", "id", v.ID, "request_id", rid, "err", err)
		return res, http.StatusServiceUnavailable, notSaved(err, rid)
	}
	res = postResult{ID: v.ID, Channel: v.Channel, Thread: v.Thread, Seq: v.Seq, ForBot: forBot, RequestID: rid, Redacted: req.note != ""}
	if request.Key != "" {
		c.requests.put(request.Key, request.Digest, res)
	}
	return res, http.StatusCreated, nil
}

// checkPost checks a post's fields; its user was checked by named.
func (c *Connector) checkPost(req postRequest) string {
	if req.Channel == "" {
		return "channel: required"
	}
	if strings.TrimSpace(req.Text) == "" {
		return "text: required"
	}
	if n, limit := utf8.RuneCountInString(req.Text), c.Limits().MaxText; n > limit {
		return fmt.Sprintf("text: %d characters, at most %d", n, limit)
	}
	return ""
}
