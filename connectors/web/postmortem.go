package web

import (
	"net/http"
)

// getPostmortem answers GET /api/threads/{thread}/postmortem.md: the
// thread's postmortem as a markdown download (issue 33), as the
// composition root's Postmortem gives it (the one last posted in the
// thread; a download never asks the model); behind the same guard as
// every /api/ route.
func (c *Connector) getPostmortem(w http.ResponseWriter, r *http.Request) {
	if c.Postmortem == nil {
		writeError(w, r, http.StatusNotFound, "postmortems are not on in this opsbot")
		return
	}
	m, err := c.hub.message(r.Context(), r.PathValue("thread"))
	if err != nil || m.Thread != m.ID {
		if err == nil {
			err = errNoThread
		}
		c.writeHubError(w, r, err)
		return
	}
	md, found, err := c.Postmortem(r.Context(), m.Channel, m.Thread)
	switch {
	case err != nil:
		c.logger().Error("web: a postmortem failed", "request_id", requestIDOf(r), "err", err)
		writeError(w, r, http.StatusInternalServerError, "opsbot could not write this thread's postmortem; try again, and tell its operator if it persists (request id "+requestIDOf(r)+")")
	case !found:
		writeError(w, r, http.StatusNotFound, "nothing is on record in this thread yet: no question, answer or command")
	default:
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
		w.Header().Set("Content-Disposition", `attachment; filename="postmortem-`+m.Thread+`.md"`)
		w.Write([]byte(md)) // the client went away if this fails
	}
}
