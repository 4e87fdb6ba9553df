package web

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// keepAlive is how often an idle stream gets a comment line, so proxies
// and browsers do not take it for dead.
const keepAlive = 15 * time.Second

// events serves GET /api/events: a Server-Sent Events stream of message
// updates, filtered by ?channel= or ?thread=. Each update is a whole
// message with its seq as the SSE id; a client that reconnects with
// Last-Event-ID (or ?since=) first gets the latest state of every message
// changed since, so it loses nothing. ?client= names the tab that sees
// its notices. ?until=finished ends the stream after the bot's first
// finished message in scope, so a script following a thread for its
// answer ends with it.
func (c *Connector) events(w http.ResponseWriter, r *http.Request) {
	since, err := sinceOf(r)
	if err != nil {
		writeError(w, r, http.StatusBadRequest, err.Error())
		return
	}
	q := r.URL.Query()
	s := &subscriber{channel: q.Get("channel"), thread: q.Get("thread"), client: q.Get("client")}
	switch q.Get("until") {
	case "":
	case "finished":
		s.untilFinished = true
	default:
		writeError(w, r, http.StatusBadRequest, fmt.Sprintf("until: %q is not a choice: use until=finished "+
			"(end the stream after the bot's first finished message) or leave it out", q.Get("until")))
		return
	}
	seq := c.hub.subscribe(s)
	defer c.hub.unsubscribe(s)
	if c.streamEnded != nil {
		defer c.streamEnded()
	}

	out := &sseWriter{w: w, rc: http.NewResponseController(w), timeout: c.writeTimeout}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	ready := fmt.Appendf(nil, "retry: 2000\n\nevent: ready\ndata: {\"seq\":%d,\"request_id\":%q}\n\n", seq, requestIDOf(r))
	if out.send(ready) != nil {
		return
	}
	if since >= 0 {
		ended, err := c.hub.replay(r.Context(), s, uint64(since), seq, out.send)
		if ended || err != nil {
			if err != nil && !errors.Is(err, errStreamGone) && r.Context().Err() == nil {
				c.logger().Error("web: an event stream's replay failed", "request_id", requestIDOf(r), "err", err)
			}
			return
		}
	}
	c.pump(out, r, s)
}

// sseWriter writes a stream's frames, each write within a deadline: a
// reader that stops reading is cut off after timeout rather than holding
// its stream (and the frames queued for it) for good.
type sseWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

// send writes frames and flushes them, within one write deadline.
func (o *sseWriter) send(frames ...[]byte) error {
	if err := o.rc.SetWriteDeadline(time.Now().Add(o.timeout)); err != nil {
		return err
	}
	for _, f := range frames {
		if _, err := o.w.Write(f); err != nil {
			return err
		}
	}
	return o.rc.Flush()
}

// pump writes live frames until the client goes, stalls past the write
// deadline, or is cut for falling behind, or the connector stops.
func (c *Connector) pump(out *sseWriter, r *http.Request, s *subscriber) {
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		var f []byte
		select {
		case frame, ok := <-s.frames:
			if !ok {
				return
			}
			f = frame
		case <-tick.C:
			f = []byte(": ping\n\n")
		case <-r.Context().Done():
			return
		case <-c.stopped:
			return
		}
		if out.send(f) != nil {
			return
		}
	}
}

// sinceOf is the seq to replay from: Last-Event-ID (a reconnecting
// EventSource sends it) or ?since=; -1 for none.
func sinceOf(r *http.Request) (int64, error) {
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		v = r.URL.Query().Get("since")
	}
	if v == "" {
		return -1, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("since / Last-Event-ID: %q is not a sequence number", v)
	}
	return n, nil
}
