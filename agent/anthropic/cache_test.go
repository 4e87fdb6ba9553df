package anthropic

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/agent"
)

// A request never carries more than the 4 cache marks the API takes: the
// last tool, the system prompt, and the last two history blocks it names;
// a mark named on a block the API would refuse (blank text) goes to the
// block before it.
func TestCacheMarksStayWithinTheAPIsFour(t *testing.T) {
	t.Parallel()
	p, err := New(Config{APIKey: "sk-ant-test"})
	if err != nil {
		t.Fatal(err)
	}
	text := func(role agent.Role, texts ...string) agent.Message {
		m := agent.Message{Role: role}
		for _, s := range texts {
			m.Content = append(m.Content, agent.Block{Type: agent.BlockText, Text: s})
		}
		return m
	}
	req := agent.Request{System: "you are opsbot", CachePrefix: len("you are opsbot"),
		Tools: []agent.ToolSpec{{Name: "a", InputSchema: json.RawMessage(`{}`)}, {Name: "b", InputSchema: json.RawMessage(`{}`)}},
		Messages: []agent.Message{text(agent.RoleUser, "first"), text(agent.RoleAssistant, "one"),
			text(agent.RoleUser, "second", " "), text(agent.RoleAssistant, "two"), text(agent.RoleUser, "third", "[time]")},
		CacheMarks: []agent.BlockRef{{Message: 0, Block: 0}, {Message: 2, Block: 1}, {Message: 4, Block: 0}}}
	params, err := p.params(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(params)
	if n := strings.Count(string(body), "cache_control"); n != 4 {
		t.Fatalf("%d cache marks; want 4: %s", n, body)
	}
	var sent struct {
		Tools, System []map[string]any
		Messages      []struct{ Content []map[string]any }
	}
	if err := json.Unmarshal(body, &sent); err != nil {
		t.Fatal(err)
	}
	marked := func(b map[string]any) bool { _, ok := b["cache_control"]; return ok }
	want := map[string]bool{"first": false, "second": true, "third": true, "[time]": false}
	for _, m := range sent.Messages {
		for _, b := range m.Content {
			if w, ok := want[b["text"].(string)]; ok && w != marked(b) {
				t.Errorf("block %q marked = %v; want %v", b["text"], marked(b), w)
			}
		}
	}
	if !marked(sent.Tools[1]) || marked(sent.Tools[0]) || !marked(sent.System[0]) {
		t.Errorf("want the last tool and the system prompt marked: %s", body)
	}
}
