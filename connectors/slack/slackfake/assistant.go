package slackfake

import (
	"encoding/json"
	"net/url"
)

// Prompt is a suggested prompt of an assistant thread.
type Prompt struct {
	Title   string `json:"title"`
	Message string `json:"message"`
}

// AssistantThread is an assistant thread as the fake keeps it: its
// suggested prompts (assistant.threads.setSuggestedPrompts) and title
// (assistant.threads.setTitle).
type AssistantThread struct {
	Channel, Thread, User string
	Prompts               []Prompt
	Title                 string
}

// NoAssistant makes the workspace one without the assistant:write scope
// (an app without Agents & AI Apps): assistant.threads.* answer
// missing_scope, as Slack does.
func (s *Server) NoAssistant() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noAssistant = true
}

// StartAssistantThread has user open the bot's assistant pane: a new
// thread in their direct message channel with the bot, announced over
// Socket Mode as assistant_thread_started. It returns the thread.
func (s *Server) StartAssistantThread(channel, user string) Posted {
	s.mu.Lock()
	ts := s.nextTS()
	s.assistant = append(s.assistant, AssistantThread{Channel: channel, Thread: ts, User: user})
	s.bump()
	s.mu.Unlock()
	inner := map[string]any{"type": "assistant_thread_started", "event_ts": ts,
		"assistant_thread": map[string]any{"user_id": user, "channel_id": channel, "thread_ts": ts,
			"context": map[string]any{"channel_id": "", "team_id": Team, "enterprise_id": ""}}}
	cb := s.callback(inner)
	return Posted{TS: ts, Thread: ts, EventID: cb["event_id"].(string), Payloads: []any{cb}, Envelopes: []string{s.Send("events_api", cb, 0)}}
}

// AssistantThreads are the assistant threads so far.
func (s *Server) AssistantThreads() []AssistantThread {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]AssistantThread(nil), s.assistant...)
}

// assistantCall serves assistant.threads.setSuggestedPrompts and
// setTitle as Slack does: the thread must be an assistant thread; prompts
// are 1 to 4, each with a title and a message; a title is required.
func (s *Server) assistantCall(method string, f url.Values) reply {
	if s.noAssistant {
		return reply{"ok": false, "error": "missing_scope", "needed": "assistant:write", "provided": "chat:write"}
	}
	var t *AssistantThread
	for i := range s.assistant {
		if s.assistant[i].Channel == f.Get("channel_id") && s.assistant[i].Thread == f.Get("thread_ts") {
			t = &s.assistant[i]
		}
	}
	if f.Get("channel_id") == "" {
		return fail("invalid_arguments")
	}
	if t == nil {
		return fail("invalid_thread_ts")
	}
	if method == "assistant.threads.setTitle" {
		if f.Get("title") == "" {
			return fail("invalid_arguments")
		}
		t.Title = f.Get("title")
		return reply{"ok": true}
	}
	var ps []Prompt
	if json.Unmarshal([]byte(f.Get("prompts")), &ps) != nil || len(ps) == 0 || len(ps) > 4 {
		return fail("invalid_arguments")
	}
	for _, p := range ps {
		if p.Title == "" || p.Message == "" {
			return fail("invalid_arguments")
		}
	}
	t.Prompts = ps
	return reply{"ok": true}
}
