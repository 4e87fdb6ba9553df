package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"

	"github.com/opsbot/opsbot/connectors"
)

// clickRequest is the body of POST /api/actions: who clicked which button
// of which message. Client names the clicker's event stream, where a reply
// to the clicker alone (Event.Respond) is shown.
type clickRequest struct {
	MessageID string `json:"message_id"`
	ActionID  string `json:"action_id"`
	Value     string `json:"value"`
	User      string `json:"user"`
	Client    string `json:"client"`
}

// errNoClient is Respond's error when the clicker has no stream open.
var errNoClient = errors.New("web: the clicker has no event stream open; the reply was not shown")

// click hands a button click to the bot. Only a button the message shows
// now can be clicked: a decided approval card, its buttons gone, refuses
// a late or forged click with 409.
func (c *Connector) click(w http.ResponseWriter, r *http.Request) {
	var req clickRequest
	if !decode(w, r, &req) {
		return
	}
	id, msg := c.named(identityOf(r), req.User)
	if msg != "" {
		writeError(w, r, statusOfName(id), msg)
		return
	}
	if id.kind == sharedKey && (req.ActionID == actionApprove || req.ActionID == actionApproveSimilar) {
		writeError(w, r, http.StatusForbidden, "the shared API key cannot approve: approve with your personal key (web.users) or through the signing-in proxy")
		return
	}
	m, err := c.hub.message(r.Context(), req.MessageID)
	if err != nil {
		c.writeHubError(w, r, err)
		return
	}
	if !m.hasButton(req.ActionID, req.Value) {
		writeError(w, r, http.StatusConflict, "that button is no longer on the message")
		return
	}
	ref := connectors.Ref{Platform: Platform, Channel: m.Channel, Thread: m.Thread, ID: m.ID}
	ev := connectors.Event{ID: clickID(id, requestIDOf(r)), Kind: connectors.EventAction,
		Channel: m.Channel, Thread: m.Thread, User: c.user(id),
		ActionID: req.ActionID, Value: req.Value, Ref: ref, Respond: c.responder(req.Client, m)}
	if err := c.dispatch(ev); err != nil {
		c.logger().Error("web: a click was not taken", "request_id", requestIDOf(r), "err", err)
		writeError(w, r, http.StatusServiceUnavailable, notTaken("opsbot did not take your click", err))
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"request_id": requestIDOf(r)})
}

// actionApprove is the bot's Approve button (bot.ActionApprove), which the
// shared key may not press.
const actionApprove = "approve"

// actionApproveSimilar is the bot's "Approve similar" button
// (bot.ActionApproveSimilar): an approval too.
const actionApproveSimilar = "approve_similar"

// clickID is a click's event id: its request id within its client, so
// that one client's id cannot make another's click a retry.
func clickID(id identity, requestID string) string {
	sum := sha256.Sum256([]byte(id.client() + "\x00" + requestID))
	return "click-" + hex.EncodeToString(sum[:12])
}

// responder shows text to the clicker's streams only.
func (c *Connector) responder(client string, m messageView) func(context.Context, string) error {
	return func(_ context.Context, text string) error {
		if !c.hub.notify(client, noticeView{Text: connectors.PlainMentions(text), Message: m.ID, Thread: m.Thread}) {
			return errNoClient
		}
		return nil
	}
}
