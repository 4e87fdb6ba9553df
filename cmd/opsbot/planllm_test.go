package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// planLLM is the fake OpenAI-compatible endpoint of fakeLLM playing a
// model whose every move the test scripts: move gets each request and
// returns a tool to call with its arguments, or else the answer text.
type planLLM struct {
	fakeLLM
	move func(req fakeLLMRequest) (tool string, args any, text string)
}

func (p *planLLM) serve(t *testing.T) string {
	p.t = t
	srv := httptest.NewServer(http.HandlerFunc(p.handle))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func (p *planLLM) handle(w http.ResponseWriter, r *http.Request) {
	var req fakeLLMRequest
	if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil || !req.Stream {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	p.requests = append(p.requests, req)
	n := len(p.requests)
	p.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	tool, args, text := p.move(req)
	if tool == "" {
		p.text(w, []string{text})
		return
	}
	b, _ := json.Marshal(args)
	p.chunk(w, map[string]any{"role": "assistant", "content": ""}, nil)
	p.chunk(w, map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": fmt.Sprintf("call_%d", n), "type": "function",
		"function": map[string]any{"name": tool, "arguments": string(b)}}}}, nil)
	p.chunk(w, map[string]any{}, "tool_calls")
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// planConfig writes a config with the web chat, the scripted model and
// alice and bob as approvers on the web, and returns its path.
func planConfig(t *testing.T, dir, llmURL string) string {
	cfg := filepath.Join(dir, "opsbot.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("web:\n  listen: 127.0.0.1:0\nlog:\n  format: json\n"+
		"agent:\n  provider: openai\n  base_url: %q\n  api_key: test-key\n  model: fake-model\n  max_steps: 60\n"+
		"approvals:\n  approvers:\n    - web:\n        users: [alice, bob]\n", llmURL)), 0o600)
	return cfg
}

// planArgs is propose_plan's input for goal and steps of (target,
// command) pairs.
func planArgs(goal string, steps ...[2]string) map[string]any {
	var ss []map[string]string
	for _, s := range steps {
		ss = append(ss, map[string]string{"target": s[0], "command": s[1]})
	}
	return map[string]any{"goal": goal, "steps": ss}
}

// lastUser is the text of the request's last message from the person
// (or opsbot's note in their place), and how many tool results follow it.
func (r fakeLLMRequest) lastUser() (text string, results int) {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		switch {
		case m.Role == "tool":
			results++
		case m.Role == "user" && !strings.HasPrefix(fmt.Sprint(m.Content), "[opsbot note, not the person's words] Time:"):
			return fmt.Sprint(m.Content), results
		}
	}
	return "", results
}

// cards are the bot's messages in thread that show an Approve button
// labelled label, by message id, with the request id the button names.
func (c *chatClient) cards(thread, label string) map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]string{}
	for id, m := range c.msgs {
		if m["thread"] != thread || m["bot"] != true {
			continue
		}
		buttons, _ := m["buttons"].([]any)
		for _, b := range buttons {
			if b := b.(map[string]any); b["action_id"] == "approve" && b["label"] == label {
				out[id] = fmt.Sprint(b["value"])
			}
		}
	}
	return out
}

// await waits for ok to hold of the messages seen so far; a hang guard
// of two minutes, not a speed bound, fails the test.
func (c *chatClient) await(what string, ok func() bool) {
	c.t.Helper()
	limit := time.NewTimer(2 * time.Minute)
	defer limit.Stop()
	for {
		c.mu.Lock()
		changed := c.changed
		c.mu.Unlock()
		if ok() {
			return
		}
		select {
		case <-changed:
		case <-limit.C:
			c.t.Fatalf("never saw %s; stream:\n%s", what, c.stream())
		}
	}
}

// texts is every bot message's text in thread, as last seen.
func (c *chatClient) texts(thread string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, m := range c.msgs {
		if m["thread"] == thread && m["bot"] == true {
			b.WriteString(fmt.Sprint(m["text"]) + "\n")
		}
	}
	return b.String()
}

// click presses a button of message id as user.
func (c *chatClient) click(user, id, action, value string) {
	c.post("/api/actions", map[string]any{"message_id": id, "action_id": action, "value": value, "user": user})
}
