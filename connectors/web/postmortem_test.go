package web

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
)

// GET /api/threads/{thread}/postmortem.md downloads what the composition
// root writes for the thread's channel and id, as markdown; a thread
// with nothing on record, an unknown thread and a failure answer in
// words; a remote client without the key is refused like every /api/
// route.
func TestPostmortemDownload(t *testing.T) {
	t.Parallel()
	c, _ := started(t, Config{APIKey: "k"}, nil)
	var asked []string
	fail := false
	c.Postmortem = func(_ context.Context, channel, thread string) (string, bool, error) {
		asked = append(asked, channel+"/"+thread)
		if fail {
			return "", false, errors.New("store: disk I/O error")
		}
		return "# Postmortem: nginx\n", thread != "", nil
	}
	h := c.Handler()
	res := say(t, h, "alice", "", "@opsbot nginx is down")
	w := call(t, h, "GET", "/api/threads/"+res.ID+"/postmortem.md", "")
	if w.Code != http.StatusOK || w.Body.String() != "# Postmortem: nginx\n" || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/markdown") ||
		!strings.Contains(w.Header().Get("Content-Disposition"), "attachment") || len(asked) != 1 || asked[0] != "ops/"+res.ID {
		t.Errorf("download: %d %q %v; asked %v", w.Code, w.Body.String(), w.Header(), asked)
	}
	if w := call(t, h, "GET", "/api/threads/nope/postmortem.md", ""); w.Code != http.StatusNotFound {
		t.Errorf("unknown thread: %d %s", w.Code, w.Body.String())
	}
	fail = true
	if w := call(t, h, "GET", "/api/threads/"+res.ID+"/postmortem.md", ""); w.Code != http.StatusInternalServerError || strings.Contains(w.Body.String(), "disk I/O") {
		t.Errorf("failure: %d %s; want 500 in general words", w.Code, w.Body.String())
	}
	remote := func(r *http.Request) { r.RemoteAddr = "10.1.2.3:5000" }
	if w := call(t, h, "GET", "/api/threads/"+res.ID+"/postmortem.md", "", remote); w.Code != http.StatusUnauthorized {
		t.Errorf("remote without the key: %d", w.Code)
	}
}
