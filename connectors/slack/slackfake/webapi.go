package slackfake

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Block is a Block Kit block as the fake reads it.
type Block struct {
	Type     string    `json:"type"`
	BlockID  string    `json:"block_id"`
	Text     *TextObj  `json:"text"`
	Fields   []TextObj `json:"fields"`
	Elements []Element `json:"elements"`
	// Plan is a plan block's title and cards, checked as Slack does.
	Plan *Plan `json:"-"`
}

// TextObj is a text object.
type TextObj struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Element is a context element (a text object) or a button.
type Element struct {
	Type     string `json:"type"`
	ActionID string `json:"action_id"`
	Value    string `json:"value"`
	Style    string `json:"style"`
	// Text is a context element's text or a button's label.
	Text string `json:"-"`
	// Positive and Negative are a feedback_buttons element's buttons.
	Positive *FeedbackButton `json:"positive_button"`
	Negative *FeedbackButton `json:"negative_button"`
}

// FeedbackButton is one button of a feedback_buttons element.
type FeedbackButton struct {
	Text  *TextObj `json:"text"`
	Value string   `json:"value"`
}

// UnmarshalJSON reads text as a string (context) or an object (button).
func (e *Element) UnmarshalJSON(b []byte) error {
	type plain Element
	var raw struct {
		plain
		Text json.RawMessage `json:"text"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*e = Element(raw.plain)
	var obj TextObj
	if json.Unmarshal(raw.Text, &obj) == nil && obj.Type != "" {
		e.Text = obj.Text
	} else {
		json.Unmarshal(raw.Text, &e.Text)
	}
	return nil
}

// tiers are Slack's per-method limits (calls a minute per workspace;
// chat.postMessage per channel).
var tiers = map[string]int{
	"chat.update": 50, "chat.appendStream": 100, "chat.startStream": 20, "chat.stopStream": 20,
	"chat.postMessage": 60, "chat.postEphemeral": 100, "users.info": 100, "usergroups.users.list": 20,
	"conversations.replies":       50,
	"assistant.threads.setStatus": 50, "assistant.threads.setSuggestedPrompts": 100, "assistant.threads.setTitle": 100,
	"auth.test": 100, "apps.connections.open": 100,
	"reactions.add": 50, "reactions.remove": 20, // Tier 3, Tier 2
}

type reply map[string]any

func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[method]++
	s.record(r.PostForm)
	if wait, limited := s.limit(method, r.PostForm.Get("channel")); limited {
		s.served429++
		if wait > 0 {
			w.Header().Set("Retry-After", fmt.Sprint(int(math.Ceil(wait.Seconds()))))
		}
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	res := s.dispatch(method, r)
	if code, ok := res["error"].(string); ok {
		s.refusals[code]++
	}
	s.bump()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(res)
}

// record keeps what the connector sent, without the bot token's field.
func (s *Server) record(form url.Values) {
	f := url.Values{}
	for k, v := range form {
		if k != "token" {
			f[k] = v
		}
	}
	s.sent = append(s.sent, f.Encode())
}

// limit applies a forced 429, then the method's tier over a sliding
// minute; it returns how long to wait.
func (s *Server) limit(method, channel string) (time.Duration, bool) {
	if len(s.force429) > 0 {
		d := s.force429[0]
		s.force429 = s.force429[1:]
		return d, true
	}
	perMin := tiers[method]
	if perMin == 0 {
		return 0, false
	}
	key := method
	if method == "chat.postMessage" {
		key += "/" + channel
	}
	now := s.Now()
	w := s.windows[key]
	for len(w) > 0 && now.Sub(w[0]) >= time.Minute {
		w = w[1:]
	}
	if len(w) >= perMin {
		s.windows[key] = w
		return w[0].Add(time.Minute).Sub(now), true
	}
	s.windows[key] = append(w, now)
	return 0, false
}

func fail(code string) reply { return reply{"ok": false, "error": code} }

// dispatch answers one method; s.mu is held.
func (s *Server) dispatch(method string, r *http.Request) reply {
	if method == "apps.connections.open" {
		return s.connectionsOpen(r)
	}
	// The bot token goes in the form body, as slack-go sends it.
	switch tok := r.PostForm.Get("token"); {
	case tok == "" && r.Header.Get("Authorization") != "":
		return fail("not_allowed_token_type") // the token is not where this fake expects it
	case tok == "":
		return fail("not_authed")
	case tok != BotToken:
		return fail("invalid_auth")
	}
	if s.revoked != "" {
		return fail(s.revoked)
	}
	f := r.PostForm
	switch method {
	case "auth.test":
		return reply{"ok": true, "user_id": BotUser, "bot_id": BotID, "team_id": Team, "user": "opsbot", "team": "fake"}
	case "chat.postMessage":
		return s.postMessage(f)
	case "chat.update":
		return s.update(f)
	case "chat.postEphemeral":
		return s.postEphemeral(f)
	case "chat.startStream":
		return s.startStream(f)
	case "chat.appendStream":
		return s.appendStream(f)
	case "chat.stopStream":
		return s.stopStream(f)
	case "conversations.replies":
		return s.replies(f)
	case "users.info":
		name, ok := s.users[f.Get("user")]
		if !ok {
			return fail("user_not_found")
		}
		return reply{"ok": true, "user": reply{"id": f.Get("user"), "name": name, "real_name": name, "profile": reply{"display_name": name}}}
	case "usergroups.users.list":
		if s.freePlan {
			return fail("plan_upgrade_required")
		}
		m, ok := s.groups[f.Get("usergroup")]
		if !ok {
			return fail("no_such_subteam")
		}
		return reply{"ok": true, "users": m}
	case "assistant.threads.setStatus":
		if s.noAssistant {
			return reply{"ok": false, "error": "missing_scope", "needed": "assistant:write", "provided": "chat:write"}
		}
		if f.Get("channel_id") == "" || f.Get("thread_ts") == "" {
			return fail("invalid_arguments")
		}
		s.statuses = append(s.statuses, Status{f.Get("channel_id"), f.Get("thread_ts"), f.Get("status"), s.Now()})
		return reply{"ok": true}
	case "assistant.threads.setSuggestedPrompts", "assistant.threads.setTitle":
		return s.assistantCall(method, f)
	case "reactions.add", "reactions.remove":
		return s.react(method, f)
	}
	return fail("unknown_method")
}

// content checks a message's text and blocks against Slack's limits.
func content(f url.Values, needText bool) ([]Block, string) {
	text := f.Get("text")
	if utf8.RuneCountInString(text) > 4000 {
		return nil, "msg_too_long"
	}
	var blocks []Block
	if raw := f.Get("blocks"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &blocks); err != nil {
			return nil, "invalid_blocks_format"
		}
	}
	if len(blocks) > 50 || !validBlocks(f.Get("blocks")) {
		return nil, "invalid_blocks"
	}
	for _, b := range blocks {
		if b.Type != "markdown" && b.Text != nil && utf8.RuneCountInString(b.Text.Text) > 3000 {
			return nil, "invalid_blocks"
		}
		if b.Type == "section" && b.Text == nil && len(b.Fields) == 0 {
			return nil, "invalid_blocks"
		}
		if len(b.Fields) > 10 || !validContextActions(b) {
			return nil, "invalid_blocks"
		}
	}
	ps, code := plans(f.Get("blocks"))
	if code != "" {
		return nil, code
	}
	if _, code := messageCards(f.Get("blocks")); code != "" {
		return nil, code
	}
	for i := range blocks {
		if blocks[i].Type == "plan" {
			blocks[i].Plan, ps = &ps[0], ps[1:]
		}
	}
	if needText && text == "" && len(blocks) == 0 {
		return nil, "no_text"
	}
	return blocks, ""
}

func (s *Server) postMessage(f url.Values) reply {
	ch := f.Get("channel")
	if ch == "" {
		return fail("channel_not_found")
	}
	blocks, code := content(f, true)
	if code != "" {
		return fail(code)
	}
	thread := f.Get("thread_ts")
	if thread != "" && s.find(ch, thread) == nil {
		return fail("thread_not_found")
	}
	m := &Message{TS: s.nextTS(), Thread: thread, Channel: ch, User: BotUser, Text: f.Get("text"), Blocks: blocks, Bot: true,
		Broadcast: thread != "" && f.Get("reply_broadcast") == "true", rawBlocks: f.Get("blocks")}
	m.Tasks, _ = messageCards(f.Get("blocks"))
	s.channels[ch] = append(s.channels[ch], m)
	return reply{"ok": true, "channel": ch, "ts": m.TS}
}

func (s *Server) update(f url.Values) reply {
	m := s.find(f.Get("channel"), f.Get("ts"))
	if m == nil {
		return fail("message_not_found")
	}
	if s.live(m) {
		return fail("streaming_state_conflict")
	}
	blocks, code := content(f, true)
	if code != "" {
		return fail(code)
	}
	m.Text, m.Blocks, m.Markdown, m.rawBlocks = f.Get("text"), blocks, "", f.Get("blocks")
	m.Updates++
	// The update replaces what the message showed, its task cards too:
	// those of its blocks are its cards now, each counted as changed when
	// it differs from the card it replaces.
	cards, _ := messageCards(f.Get("blocks"))
	for i, c := range cards {
		if j := slices.IndexFunc(m.Tasks, func(t Task) bool { return t.ID == c.ID }); j >= 0 {
			was := m.Tasks[j]
			cards[i].Updates = was.Updates
			if was.Title != c.Title || was.Status != c.Status || was.Details != c.Details || was.Output != c.Output {
				cards[i].Updates++
			}
		}
	}
	m.Tasks = cards
	return reply{"ok": true, "channel": m.Channel, "ts": m.TS, "text": m.Text}
}

func (s *Server) postEphemeral(f url.Values) reply {
	if f.Get("user") == "" {
		return fail("user_not_in_channel")
	}
	blocks, code := content(f, true)
	if code != "" {
		return fail(code)
	}
	m := Message{Text: f.Get("text"), Blocks: blocks}
	s.ephemeral = append(s.ephemeral, Ephemeral{Channel: f.Get("channel"), Thread: f.Get("thread_ts"), User: f.Get("user"), Text: m.Shown()})
	return reply{"ok": true, "message_ts": s.nextTS()}
}

// live reports whether m is a stream that still takes appends: it
// expires StreamLifetime after it started.
func (s *Server) live(m *Message) bool {
	if m.Streaming && s.Now().Sub(m.Started) >= StreamLifetime {
		m.Streaming = false
	}
	return m.Streaming
}

func (s *Server) startStream(f url.Values) reply {
	ch, thread := f.Get("channel"), f.Get("thread_ts")
	if ch == "" {
		return fail("channel_not_found")
	}
	if thread == "" || s.find(ch, thread) == nil {
		return fail("invalid_thread_ts")
	}
	if !strings.HasPrefix(ch, "D") {
		if f.Get("recipient_user_id") == "" {
			return fail("missing_recipient_user_id")
		}
		if f.Get("recipient_team_id") == "" {
			return fail("missing_recipient_team_id")
		}
	}
	if utf8.RuneCountInString(f.Get("markdown_text")) > 12000 {
		return fail("msg_too_long")
	}
	if mode := f.Get("task_display_mode"); mode != "" && mode != "timeline" && mode != "plan" {
		return fail("invalid_arguments")
	}
	m := &Message{TS: s.nextTS(), Thread: thread, Channel: ch, User: BotUser, Markdown: f.Get("markdown_text"),
		Streaming: true, Started: s.Now(), Bot: true}
	if code := s.chunks(m, f.Get("chunks")); code != "" {
		return fail(code)
	}
	s.channels[ch] = append(s.channels[ch], m)
	return reply{"ok": true, "channel": ch, "ts": m.TS}
}

func (s *Server) appendStream(f url.Values) reply {
	m := s.find(f.Get("channel"), f.Get("ts"))
	if m == nil {
		return fail("message_not_found")
	}
	if !s.live(m) {
		return fail("message_not_in_streaming_state")
	}
	if f.Get("markdown_text") == "" && f.Get("chunks") == "" {
		return fail("no_text")
	}
	if utf8.RuneCountInString(m.Markdown+f.Get("markdown_text")) > 12000 {
		return fail("msg_too_long")
	}
	if code := s.chunks(m, f.Get("chunks")); code != "" {
		return fail(code)
	}
	m.Markdown += f.Get("markdown_text")
	m.Appends++
	return reply{"ok": true, "channel": m.Channel, "ts": m.TS}
}

func (s *Server) stopStream(f url.Values) reply {
	m := s.find(f.Get("channel"), f.Get("ts"))
	if m == nil {
		return fail("message_not_found")
	}
	if !s.live(m) {
		return fail("message_not_in_streaming_state")
	}
	blocks, code := content(f, false)
	if code != "" {
		return fail(code)
	}
	if code := s.chunks(m, f.Get("chunks")); code != "" {
		return fail(code)
	}
	m.Markdown += f.Get("markdown_text")
	m.Blocks = blocks
	m.Streaming, m.Stopped = false, true
	return reply{"ok": true, "channel": m.Channel, "ts": m.TS}
}

// replies answers conversations.replies: the thread's root, then its
// replies from oldest to latest (inclusive), each with the text it shows
// (a stream's markdown, else its text field).
func (s *Server) replies(f url.Values) reply {
	root := s.find(f.Get("channel"), f.Get("ts"))
	if root == nil {
		return fail("thread_not_found")
	}
	in := func(ts string) bool {
		return (f.Get("oldest") == "" || ts >= f.Get("oldest")) && (f.Get("latest") == "" || ts <= f.Get("latest"))
	}
	var out []reply
	for _, m := range s.channels[root.Channel] {
		if m == root || (m.Thread == root.TS && in(m.TS)) {
			text := m.Text
			if m.Markdown != "" {
				text = m.Markdown
			}
			r := reply{"type": "message", "ts": m.TS, "thread_ts": root.TS, "user": m.User, "text": text}
			switch {
			case m.rawBlocks != "":
				r["blocks"] = json.RawMessage(m.rawBlocks)
			case m.Markdown != "" || len(m.Tasks) > 0:
				r["blocks"] = streamedBlocks(m)
			}
			out = append(out, r)
		}
	}
	return reply{"ok": true, "messages": out, "has_more": false}
}

// streamedBlocks is what a streamed message holds, as blocks: its text as
// a markdown block, then its task cards as task_card blocks (Slack keeps
// a stream's chunks as the message's blocks; where each card falls in
// the text is not kept here).
func streamedBlocks(m *Message) []reply {
	var out []reply
	if m.Markdown != "" {
		out = append(out, reply{"type": "markdown", "text": m.Markdown})
	}
	rich := func(s string) reply {
		return reply{"type": "rich_text", "elements": []reply{{"type": "rich_text_section", "elements": []reply{{"type": "text", "text": s}}}}}
	}
	for _, t := range m.Tasks {
		b := reply{"type": "task_card", "task_id": t.ID, "title": t.Title}
		if t.Status != "" {
			b["status"] = t.Status
		}
		if t.Details != "" {
			b["details"] = rich(t.Details)
		}
		if t.Output != "" {
			b["output"] = rich(t.Output)
		}
		out = append(out, b)
	}
	return out
}
