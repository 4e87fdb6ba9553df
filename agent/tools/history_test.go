package tools

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/store"
)

// search_history finds another thread's question and the command its
// turn ran, with time, exit code and references; it leaves out the
// asking thread, honours host and since, and says so when nothing
// matches.
func TestSearchHistoryRecallsPastThreadsAndCommands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{Path: filepath.Join(t.TempDir(), "opsbot.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	past, _, _ := st.Sessions().SessionFor(ctx, store.ThreadKey{Platform: "slack", Channel: "C1", Thread: "1700.1"})
	now, _, _ := st.Sessions().SessionFor(ctx, store.ThreadKey{Platform: "slack", Channel: "C1", Thread: "1800.1"})
	turn, _ := st.Sessions().BeginTurn(ctx, past.ID)
	text, _ := json.Marshal([]map[string]string{{"type": "text", "text": "postgres replication lag on db-2"}})
	st.Sessions().AppendMessages(ctx, past.ID, store.Message{Role: "user", Content: text})
	st.Sessions().AppendMessages(ctx, now.ID, store.Message{Role: "user", Content: text})
	st.Audit().Audit(ctx, store.AuditEntry{Actor: "slack:bob", Action: "command.end", Subject: "host:db-2",
		Detail: json.RawMessage(`{"command":"systemctl restart postgres-replication","exit_code":0}`)})
	st.Sessions().EndTurn(ctx, turn.ID, store.TurnDone)

	tool := &SearchHistory{Memory: st.Memory()}
	call := func(input string) agent.ToolResult {
		return tool.Call(ctx, agent.ToolCall{Name: "search_history", Input: json.RawMessage(input), Session: agent.SessionInfo{ID: now.ID}})
	}
	res := call(`{"query":"postgres replication","host":"db-2"}`)
	for _, want := range []string{"message: postgres replication lag on db-2", "command on db-2: systemctl restart postgres-replication (exit 0) [audit row ",
		"thread slack C1/1700.1", time.Now().UTC().Format("2006-01-02")} {
		if res.IsError || !strings.Contains(res.Content, want) {
			t.Errorf("result lacks %q:\n%s", want, res.Content)
		}
	}
	if strings.Contains(res.Content, "1800.1") {
		t.Errorf("the asking thread was recalled:\n%s", res.Content)
	}
	if res := call(`{"query":"postgres","host":"web-1"}`); res.Content != "Nothing in the memory matches." {
		t.Errorf("another host: %q", res.Content)
	}
	if res := call(`{"query":"postgres","since":"2099-01-01"}`); res.Content != "Nothing in the memory matches." {
		t.Errorf("since the future: %q", res.Content)
	}
	if res := call(`{"query":"postgres","since":"last week"}`); !res.IsError {
		t.Errorf("an unreadable since was accepted: %q", res.Content)
	}
}
