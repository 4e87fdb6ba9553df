package web

import (
	"context"
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
	if msg := checkUser(req.User); msg != "" {
		writeError(w, r, http.StatusBadRequest, msg)
		return
	}
	m, err := c.hub.message(req.MessageID)
	if err != nil {
		writeError(w, r, statusOf(err), err.Error())
		return
	}
	if !m.hasButton(req.ActionID, req.Value) {
		writeError(w, r, http.StatusConflict, "that button is no longer on the message")
		return
	}
	ref := connectors.Ref{Platform: Platform, Channel: m.Channel, Thread: m.Thread, ID: m.ID}
	ev := connectors.Event{ID: "click-" + requestIDOf(r), Kind: connectors.EventAction,
		Channel: m.Channel, Thread: m.Thread, User: connectors.User{ID: req.User, Name: req.User},
		ActionID: req.ActionID, Value: req.Value, Ref: ref, Respond: c.responder(req.Client, m)}
	if !c.dispatch(ev) {
		writeError(w, r, http.StatusServiceUnavailable, errBotDown.Error())
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"request_id": requestIDOf(r)})
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
