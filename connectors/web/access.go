package web

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"mime"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"sync"
)

// The API's headers and the cookie the page keeps the API key in (an
// EventSource cannot send headers).
const (
	HeaderKey       = "X-Opsbot-Key"
	HeaderRequestID = "X-Request-Id"
	KeyCookie       = "opsbot_key"
)

type requestIDKey struct{}

// requestIDOf is the request id the guard gave r.
func requestIDOf(r *http.Request) string {
	id, _ := r.Context().Value(requestIDKey{}).(string)
	return id
}

// validRequestID is what a client's own X-Request-Id may be: printable
// ASCII without blanks, at most 128 characters.
var validRequestID = regexp.MustCompile(`^[\x21-\x7e]{1,128}$`)

// guard wraps the API: it names every request (the client's X-Request-Id
// or a new one, echoed in the response), finds who it speaks for
// (identify) and refuses one it cannot place, and refuses what a browser
// on another site could send: cross-origin requests, and POSTs that are
// not JSON (a plain form needs no CORS preflight).
func (c *Connector) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(HeaderRequestID)
		if !validRequestID.MatchString(id) {
			id = newRequestID()
		}
		w.Header().Set(HeaderRequestID, id)
		w.Header().Set("Cache-Control", "no-store")
		r = r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id))
		who, status, msg := c.identify(r)
		if status == 0 {
			status, msg = refuse(r)
		}
		if status != 0 {
			writeError(w, r, status, msg)
			return
		}
		next.ServeHTTP(w, withIdentity(r, who))
	})
}

func newRequestID() string {
	b := make([]byte, 8)
	rand.Read(b) // never fails (crypto/rand, Go ≥ 1.24)
	return "r-" + hex.EncodeToString(b)
}

// refuse says why a request from a known client may not pass, or 0.
func refuse(r *http.Request) (int, string) {
	if origin := r.Header.Get("Origin"); origin != "" && !sameOrigin(origin, r.Host) {
		return http.StatusForbidden, "cross-origin requests are refused"
	}
	if r.Method == http.MethodPost {
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
			return http.StatusUnsupportedMediaType, "send the body as JSON with Content-Type: application/json"
		}
	}
	return 0, ""
}

// localClient reports whether r comes from this machine, by the
// connection's address. A request a proxy forwarded (it says so in its
// headers) speaks for someone else; and one addressed to a name that is
// not loopback is a page from another site whose name was pointed at
// 127.0.0.1 (DNS rebinding), so neither counts.
func localClient(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil || !isLoopback(host) {
		return false
	}
	for _, h := range []string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Real-Ip"} {
		if r.Header.Get(h) != "" {
			return false
		}
	}
	return isLoopback(hostOnly(r.Host))
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// sameOrigin reports whether an Origin header names the host r was sent to.
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	return err == nil && u.Host == host
}

// requestLog remembers the answers to recent posts by client and request
// id, so a client that retries a post (same X-Request-Id) gets the first
// answer instead of a second message, while another client's post with the
// same id is its own. Each answer is kept with a digest of the post it
// answered, so the id reused for another post is told apart from a retry.
// The Archive keeps the same with each message (PostRequest), and New
// loads the latest into the log: a retry after a restart is answered too.
type requestLog struct {
	mu    sync.Mutex
	limit int
	order []string
	byID  map[string]loggedPost
}

type loggedPost struct {
	res    postResult
	digest string
}

func newRequestLog(limit int) *requestLog {
	return &requestLog{limit: limit, byID: map[string]loggedPost{}}
}

// requestKey names a client's request id, as the log and the Archive
// keep it.
func requestKey(id identity, requestID string) string {
	sum := sha256.Sum256([]byte(id.client() + "\x00" + requestID))
	return hex.EncodeToString(sum[:])
}

// digestOf identifies a post by everything that makes it that post.
func digestOf(req postRequest) string {
	b, _ := json.Marshal(req) // strings only: cannot fail
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// get returns the answer to an earlier post under key; same says whether
// that post had this digest.
func (l *requestLog) get(key, digest string) (res postResult, same, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, ok := l.byID[key]
	return p.res, ok && p.digest == digest, ok
}

func (l *requestLog) put(key, digest string, res postResult) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.byID[key]; ok {
		return
	}
	if len(l.order) == l.limit {
		delete(l.byID, l.order[0])
		l.order = l.order[1:]
	}
	l.order = append(l.order, key)
	l.byID[key] = loggedPost{res: res, digest: digest}
}

// load remembers the latest posts an Archive kept with their request, as
// if they had just been answered.
func (l *requestLog) load(ctx context.Context, a Archive) error {
	k, ok := a.(RequestKeeper)
	if !ok {
		return nil
	}
	posts, err := k.PostRequests(ctx, l.limit)
	if err != nil {
		return err
	}
	for i := len(posts) - 1; i >= 0; i-- { // oldest first, as they came
		p := posts[i]
		l.put(p.Request.Key, p.Request.Digest, postResult{ID: p.ID, Channel: p.Channel, Thread: p.Thread,
			Seq: uint64(idNumber(p.ID)), ForBot: p.Request.ForBot})
	}
	return nil
}
