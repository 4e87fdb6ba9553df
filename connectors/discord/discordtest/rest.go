package discordtest

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// apiError is Discord's JSON error body.
type apiError struct {
	status  int
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (f *Fake) serveREST(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	path := strings.TrimPrefix(r.URL.Path, "/api/v9/")
	segs := strings.Split(strings.TrimSuffix(path, "/"), "/")
	route := routeOf(r.Method, segs)
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	defer f.changedLocked()
	status := http.StatusOK
	defer func() {
		f.calls = append(f.calls, Call{Method: r.Method, Route: route, Major: majorOf(segs), Status: status, At: now})
	}()
	if len(body) > 0 {
		f.sent = append(f.sent, string(body))
	}
	interaction := segs[0] == "interactions" || segs[0] == "webhooks"
	if !interaction && r.Header.Get("Authorization") != "Bot "+f.Token {
		status = http.StatusUnauthorized
		writeJSON(w, status, apiError{Code: 0, Message: "401: Unauthorized"})
		return
	}
	if !interaction {
		if retry, global, limited := f.limits.take(w.Header(), route, majorOf(segs), now); limited {
			status = http.StatusTooManyRequests
			w.Header().Set("Retry-After", fmt.Sprint(math.Ceil(retry.Seconds())))
			writeJSON(w, status, map[string]any{"message": "You are being rate limited.", "retry_after": retry.Seconds(), "global": global})
			return
		}
	}
	out, err := f.route(r, segs, body, now)
	if err != nil {
		status = err.status
		writeJSON(w, status, err)
		return
	}
	if out == nil {
		status = http.StatusNoContent
		w.WriteHeader(status)
		return
	}
	writeJSON(w, status, out)
}

// routeOf is a call's route with ids collapsed, as Discord groups them.
func routeOf(method string, segs []string) string {
	out := make([]string, len(segs))
	for i, s := range segs {
		out[i] = s
		if i > 0 && (strings.ContainsAny(s, "0123456789") || len(s) > 32) {
			out[i] = ":id"
		}
	}
	return method + " /" + strings.Join(out, "/")
}

// majorOf is the major parameter of a call (its channel).
func majorOf(segs []string) string {
	if len(segs) > 1 {
		return segs[0] + "/" + segs[1]
	}
	return segs[0]
}

func (f *Fake) route(r *http.Request, segs []string, body []byte, now time.Time) (any, *apiError) {
	switch {
	case r.Method == "GET" && len(segs) == 1 && segs[0] == "gateway":
		return map[string]string{"url": "ws" + strings.TrimPrefix(f.srv.URL, "http") + "/gw"}, nil
	case r.Method == "GET" && len(segs) == 2 && segs[0] == "users" && segs[1] == "@me":
		return map[string]any{"id": f.BotID, "username": "opsbot", "bot": true}, nil
	case r.Method == "GET" && len(segs) == 2 && segs[0] == "channels":
		c, ok := f.channels[segs[1]]
		if !ok {
			return nil, unknownChannel()
		}
		return channelJSON(c), nil
	case r.Method == "POST" && len(segs) == 3 && segs[0] == "channels" && segs[2] == "messages":
		return f.createLocked(segs[1], body, now, "", "")
	case r.Method == "GET" && len(segs) == 4 && segs[0] == "channels" && segs[2] == "messages":
		return f.messageLocked(segs[1], segs[3])
	case r.Method == "PATCH" && len(segs) == 4 && segs[0] == "channels" && segs[2] == "messages":
		return f.editLocked(segs[1], segs[3], body, now)
	case r.Method == "POST" && len(segs) == 5 && segs[0] == "channels" && segs[2] == "messages" && segs[4] == "threads":
		return f.threadLocked(segs[1], segs[3], body)
	case r.Method == "POST" && len(segs) == 4 && segs[0] == "interactions" && segs[3] == "callback":
		return f.callbackLocked(segs[1], segs[2], body, now)
	case r.Method == "POST" && len(segs) == 3 && segs[0] == "webhooks":
		return f.followupLocked(segs[1], segs[2], body, now)
	}
	return nil, &apiError{status: http.StatusNotFound, Code: 0, Message: "404: Not Found"}
}

func unknownChannel() *apiError {
	return &apiError{status: http.StatusNotFound, Code: 10003, Message: "Unknown Channel"}
}

func invalid(format string, a ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, Code: 50035, Message: "Invalid Form Body: " + fmt.Sprintf(format, a...)}
}

// messageBody is what a create or an edit may carry.
type messageBody struct {
	Content         *string           `json:"content"`
	Embeds          []json.RawMessage `json:"embeds"`
	Components      json.RawMessage   `json:"components"`
	AllowedMentions json.RawMessage   `json:"allowed_mentions"`
	Flags           int               `json:"flags"`
	StickerIDs      []string          `json:"sticker_ids"`
	Poll            json.RawMessage   `json:"poll"`
}

func (f *Fake) createLocked(channel string, body []byte, now time.Time, ephemeralFor, _ string) (any, *apiError) {
	c, ok := f.channels[channel]
	if !ok {
		return nil, unknownChannel()
	}
	var mb messageBody
	if err := json.Unmarshal(body, &mb); err != nil {
		return nil, invalid("not JSON")
	}
	if e := validate(mb); e != nil {
		return nil, e
	}
	if (mb.Content == nil || *mb.Content == "") && len(mb.Embeds) == 0 && !hasRows(mb.Components) {
		return nil, &apiError{status: http.StatusBadRequest, Code: 50006, Message: "Cannot send an empty message"}
	}
	m := &Message{ID: f.id(), ChannelID: c.ID, AuthorID: f.BotID, Bot: true, Embeds: mb.Embeds, Components: mb.Components,
		AllowedMentions: mb.AllowedMentions, Flags: mb.Flags, Created: now, Ephemeral: ephemeralFor != "", For: ephemeralFor}
	if mb.Content != nil {
		m.Content = *mb.Content
	}
	if m.Flags&FlagComponentsV2 != 0 {
		m.Content = shownV2(mb.Components)
	}
	f.messages[m.ID] = m
	c.Messages = append(c.Messages, m.ID)
	if !m.Ephemeral {
		// Discord sends the bot its own messages too; it must ignore them.
		f.gw.dispatchLocked("MESSAGE_CREATE", f.messageEventLocked(m, person{ID: f.BotID, Name: "opsbot", bot: true}, nil))
	}
	return messageJSON(m, c), nil
}

// messageLocked answers GET /channels/{channel}/messages/{id}: the message
// as it shows now (recovery reads back what a crash cut).
func (f *Fake) messageLocked(channel, id string) (any, *apiError) {
	c, ok := f.channels[channel]
	if !ok {
		return nil, unknownChannel()
	}
	m, ok := f.messages[id]
	if !ok || m.ChannelID != channel {
		return nil, &apiError{status: http.StatusNotFound, Code: 10008, Message: "Unknown Message"}
	}
	return messageJSON(m, c), nil
}

func (f *Fake) editLocked(channel, id string, body []byte, now time.Time) (any, *apiError) {
	c, ok := f.channels[channel]
	if !ok {
		return nil, unknownChannel()
	}
	m, ok := f.messages[id]
	if !ok || m.ChannelID != channel {
		return nil, &apiError{status: http.StatusNotFound, Code: 10008, Message: "Unknown Message"}
	}
	if m.AuthorID != f.BotID {
		return nil, &apiError{status: http.StatusForbidden, Code: 50005, Message: "Cannot edit a message authored by another user"}
	}
	var mb messageBody
	if err := json.Unmarshal(body, &mb); err != nil {
		return nil, invalid("not JSON")
	}
	// The flag cannot be taken off a V2 message; the fake asks that each
	// edit say it again, so that a legacy edit (content) of a V2 message
	// is refused, not silently read.
	if m.Flags&FlagComponentsV2 != 0 && mb.Flags&FlagComponentsV2 == 0 {
		return nil, invalid("flags: IS_COMPONENTS_V2 cannot be removed from a message that has it")
	}
	// Whether Discord turns a legacy message with content into a V2 one
	// is not documented; the fake takes the strict reading (it does not),
	// which the connector must survive.
	if m.Flags&FlagComponentsV2 == 0 && mb.Flags&FlagComponentsV2 != 0 && (m.Content != "" || len(m.Embeds) > 0) {
		return nil, invalid("flags: IS_COMPONENTS_V2 cannot be set on a message with content or embeds")
	}
	if e := validate(mb); e != nil {
		return nil, e
	}
	if mb.Content != nil {
		m.Content = *mb.Content
	}
	if mb.Embeds != nil {
		m.Embeds = mb.Embeds
	}
	if mb.Components != nil {
		m.Components = mb.Components
	}
	if mb.Flags&FlagComponentsV2 != 0 {
		m.Flags |= FlagComponentsV2
		m.Content, m.Embeds = shownV2(m.Components), nil
	}
	m.Edits = append(m.Edits, now)
	return messageJSON(m, c), nil
}

func (f *Fake) threadLocked(channel, message string, body []byte) (any, *apiError) {
	c, ok := f.channels[channel]
	if !ok {
		return nil, unknownChannel()
	}
	m, ok := f.messages[message]
	if !ok || m.ChannelID != channel {
		return nil, &apiError{status: http.StatusNotFound, Code: 10008, Message: "Unknown Message"}
	}
	if _, exists := f.channels[message]; exists {
		return nil, &apiError{status: http.StatusBadRequest, Code: 160004, Message: "A thread has already been created for this message"}
	}
	var tb struct {
		Name string `json:"name"`
	}
	json.Unmarshal(body, &tb)
	if n := utf8.RuneCountInString(tb.Name); n < 1 || n > 100 {
		return nil, invalid("name: must be between 1 and 100 in length (got %d)", n)
	}
	t := &Channel{ID: message, GuildID: c.GuildID, Name: tb.Name, Type: TypeThread, ParentID: channel}
	f.channels[t.ID] = t
	return channelJSON(t), nil
}

func (f *Fake) callbackLocked(id, tok string, body []byte, now time.Time) (any, *apiError) {
	cl, ok := f.clicks[id]
	if !ok || cl.token != tok {
		return nil, &apiError{status: http.StatusNotFound, Code: 10062, Message: "Unknown interaction"}
	}
	if cl.acked {
		return nil, &apiError{status: http.StatusBadRequest, Code: 40060, Message: "Interaction has already been acknowledged."}
	}
	if now.Sub(cl.at) > InteractionDeadline {
		cl.late = true // the person saw "This interaction failed"
		return nil, &apiError{status: http.StatusNotFound, Code: 10062, Message: "Unknown interaction"}
	}
	var rb struct {
		Type int `json:"type"`
	}
	json.Unmarshal(body, &rb)
	cl.acked, cl.ackType = true, rb.Type
	return nil, nil
}

func (f *Fake) followupLocked(app, tok string, body []byte, now time.Time) (any, *apiError) {
	var cl *click
	for _, c := range f.clicks {
		if c.token == tok {
			cl = c
		}
	}
	if app != f.AppID || cl == nil || now.Sub(cl.at) > 15*time.Minute {
		return nil, &apiError{status: http.StatusNotFound, Code: 10015, Message: "Unknown Webhook"}
	}
	if !cl.acked {
		return nil, &apiError{status: http.StatusBadRequest, Code: 40060, Message: "Interaction has not been acknowledged."}
	}
	m := f.messages[cl.messageID]
	var mb messageBody
	json.Unmarshal(body, &mb)
	who := ""
	if mb.Flags&64 != 0 {
		who = cl.userID
	}
	return f.createLocked(m.ChannelID, body, now, who, "")
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func channelJSON(c *Channel) map[string]any {
	out := map[string]any{"id": c.ID, "type": c.Type, "name": c.Name}
	if c.GuildID != "" {
		out["guild_id"] = c.GuildID
	}
	if c.ParentID != "" {
		out["parent_id"] = c.ParentID
	}
	return out
}

func messageJSON(m *Message, c *Channel) map[string]any {
	out := map[string]any{"id": m.ID, "channel_id": m.ChannelID, "content": m.Content, "type": 0,
		"author": map[string]any{"id": m.AuthorID, "username": "opsbot", "bot": m.Bot}, "timestamp": m.Created.Format(time.RFC3339)}
	if c.GuildID != "" {
		out["guild_id"] = c.GuildID
	}
	if m.Components != nil {
		out["components"] = m.Components
	}
	if m.Flags != 0 {
		out["flags"] = m.Flags
	}
	if m.Flags&FlagComponentsV2 != 0 {
		out["content"] = "" // a V2 message has no content
	}
	return out
}
