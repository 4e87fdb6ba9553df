package store

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/opsbot/opsbot/connectors/web/archive"
)

// textMsg is a message of text blocks, as agent/persist stores them.
func textMsg(role, text string) Message {
	b, _ := json.Marshal([]map[string]string{{"type": "text", "text": text}})
	return Message{Role: role, Content: b}
}

// ranCommand appends the audit rows the executor writes for a command.
func ranCommand(t *testing.T, s *Store, actor, host, command string, exit int) {
	t.Helper()
	ctx := context.Background()
	for _, e := range []AuditEntry{
		{Actor: actor, Action: "command.start", Subject: "host:" + host, Detail: json.RawMessage(fmt.Sprintf(`{"command":%q}`, command))},
		{Actor: actor, Action: "command.end", Subject: "host:" + host, Detail: json.RawMessage(fmt.Sprintf(`{"command":%q,"exit_code":%d}`, command, exit))},
	} {
		e.At = s.Now()
		if err := s.Audit().Audit(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
}

// A thread's question and answer, the command its turn ran and an alert
// are recalled by their words, each with its time and thread; a health
// check's command, another host and an older time are not.
func TestMemoryRecallsThreadsCommandsAndAlerts(t *testing.T) {
	t.Parallel()
	s, clock := openTest(t)
	ctx := context.Background()
	key := ThreadKey{Platform: "slack", Channel: "C1", Thread: "1700.1"}
	sess, _, _ := s.Sessions().SessionFor(ctx, key)
	turn, _ := s.Sessions().BeginTurn(ctx, sess.ID)
	s.Sessions().AppendMessages(ctx, sess.ID, textMsg("user", "Why is the disk full on db-1?"),
		Message{Role: "assistant", Content: json.RawMessage(`[{"type":"tool_use","id":"x","name":"run","input":{"command":"du -sh /var/log"}}]`)})
	clock.Add(time.Second)
	ranCommand(t, s, "slack:alice", "db-1", "du -sh /var/log", 0)
	ranCommand(t, s, "scheduler", "db-1", "df -h /var/log", 0)
	s.Sessions().AppendMessages(ctx, sess.ID, textMsg("assistant", "The disk filled with old logs in /var/log; logrotate was stopped."))
	s.Sessions().EndTurn(ctx, turn.ID, TurnDone)
	state, _ := json.Marshal(map[string]any{"title": "DiskFull on db-1", "labels": map[string]string{"alertname": "DiskFull", "instance": "db-1:9100"}})
	if err := s.Alerts().SaveAlertGroup(ctx, AlertGroup{Source: "am", Key: "g1", Platform: "slack", Channel: "C1", Thread: "1700.1", Status: "firing", State: state}, 0); err != nil {
		t.Fatal(err)
	}

	hits, err := s.Memory().Search(ctx, MemoryQuery{Text: "disk full logs du", Host: "db-1"})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]MemoryHit{}
	for _, h := range hits {
		if h.Thread != key || h.SessionID != sess.ID || h.At.IsZero() {
			t.Errorf("hit %+v: want thread %v, session %d and a time", h, key, sess.ID)
		}
		kinds[h.Kind] = h
	}
	if c := kinds[MemoryCommand]; c.Text != "du -sh /var/log" || !c.HasExit || c.ExitCode != 0 || c.AuditID == 0 || c.Host != "db-1" {
		t.Errorf("command hit = %+v; want du on db-1, exit 0, with its audit row", c)
	}
	if a := kinds[MemoryAlert]; a.AlertRef == "" || a.Host != "db-1:9100" {
		t.Errorf("alert hit = %+v; want the group on db-1:9100", a)
	}
	if m := kinds[MemoryMessage]; m.Seq == 0 {
		t.Errorf("message hit = %+v; want its seq", m)
	}
	if all, _ := s.Memory().Search(ctx, MemoryQuery{Text: "disk logs"}); countKind(all, MemoryMessage) != 2 {
		t.Errorf("%d messages recalled; want the question and the answer (tool calls are not indexed)", countKind(all, MemoryMessage))
	}
	if df, _ := s.Memory().Search(ctx, MemoryQuery{Text: "df"}); len(df) != 0 {
		t.Errorf("a health check's command was recalled: %+v", df)
	}
	if other, _ := s.Memory().Search(ctx, MemoryQuery{Text: "disk", Host: "web-1"}); len(other) != 0 {
		t.Errorf("host web-1 recalled %+v; want nothing", other)
	}
	if later, _ := s.Memory().Search(ctx, MemoryQuery{Text: "disk", Since: clock.Now().Add(time.Hour)}); len(later) != 0 {
		t.Errorf("since an hour on recalled %+v; want nothing", later)
	}
	if mine, _ := s.Memory().Search(ctx, MemoryQuery{Text: "disk", NotSession: sess.ID}); len(mine) != 0 {
		t.Errorf("leaving out the thread recalled %+v; want nothing", mine)
	}
}

func countKind(hits []MemoryHit, kind string) int {
	n := 0
	for _, h := range hits {
		if h.Kind == kind {
			n++
		}
	}
	return n
}

// A web thread deleted past web.retention leaves nothing in the memory.
func TestMemoryFollowsWebRetention(t *testing.T) {
	t.Parallel()
	s, clock := openTest(t)
	ctx := context.Background()
	sess, _, _ := s.Sessions().SessionFor(ctx, ThreadKey{Platform: "web", Channel: "ops", Thread: "m1"})
	s.Web().Save(ctx, archive.Message{ID: "m1", Channel: "ops", Thread: "m1", User: "alice", Message: json.RawMessage(`{"text":"nginx down"}`),
		Finished: true, Seq: 1, Created: clock.Now(), Updated: clock.Now()})
	s.Sessions().AppendMessages(ctx, sess.ID, textMsg("user", "nginx is down on web-2"))
	if hits, _ := s.Memory().Search(ctx, MemoryQuery{Text: "nginx"}); len(hits) != 1 {
		t.Fatalf("before retention: %d hits; want 1", len(hits))
	}
	if err := s.Web().DeleteThreads(ctx, []string{"m1"}); err != nil {
		t.Fatal(err)
	}
	if hits, _ := s.Memory().Search(ctx, MemoryQuery{Text: "nginx"}); len(hits) != 0 {
		t.Errorf("after retention: %+v; want nothing", hits)
	}
}
