package store

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/opsbot/opsbot/connectors/web/archive"
)

// The web chat's pages come from SQLite: thread summaries, a thread's
// messages newest first by the number in their id (m10 after m9), what
// changed after a seq, and whole threads deleted.
func TestWebPages(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	save := func(id, thread string, seq uint64, bot bool, text string) {
		t.Helper()
		msg, _ := json.Marshal(map[string]string{"text": text})
		if err := s.Web().Save(ctx, archive.Message{ID: id, Channel: "ops", Thread: thread, User: "alice", Bot: bot, Message: msg,
			Finished: true, Seq: seq, Created: at, Updated: at.Add(time.Duration(seq) * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	save("m1", "m1", 1, false, "hi @OpsBot")
	for i := 2; i <= 12; i++ {
		save(fmt.Sprintf("m%d", i), "m1", uint64(i), false, "reply")
	}
	save("m13", "m13", 13, false, "ops@example.com")
	save("m14", "m14", 14, true, "a bot's thread")
	save("m2", "m1", 15, false, "edited") // a later change of m2

	threads, err := s.Web().Threads(ctx, "@opsbot")
	if err != nil || len(threads) != 3 {
		t.Fatalf("threads: %+v %v", threads, err)
	}
	by := map[string]archive.Thread{}
	for _, th := range threads {
		by[th.ID] = th
	}
	if m1 := by["m1"]; m1.Replies != 11 || m1.Seq != 15 || m1.LastID != 12 || !m1.Mentioned || m1.HasBot {
		t.Errorf("m1 summed up as %+v", m1)
	}
	if by["m13"].Mentioned || !by["m14"].HasBot {
		t.Errorf("m13 %+v, m14 %+v", by["m13"], by["m14"])
	}
	page, err := s.Web().ThreadMessages(ctx, "m1", 0, 3)
	if err != nil || len(page) != 3 || page[0].ID != "m12" || page[2].ID != "m10" {
		t.Fatalf("the newest page: %v %v", ids(page), err)
	}
	if page, _ = s.Web().ThreadMessages(ctx, "m1", 10, 20); len(page) != 9 || page[0].ID != "m9" || page[8].ID != "m1" {
		t.Errorf("before m10: %v", ids(page))
	}
	changed, err := s.Web().Changed(ctx, 11, 14, "", "", 10)
	if err != nil || fmt.Sprint(ids(changed)) != "[m12 m13 m14]" {
		t.Errorf("changed in (11, 14]: %v %v (m2 changed at 15, after)", ids(changed), err)
	}
	if changed, _ = s.Web().Changed(ctx, 0, 99, "ops", "m1", 2); fmt.Sprint(ids(changed)) != "[m1 m3]" {
		t.Errorf("thread m1, first 2 changes: %v", ids(changed))
	}
	if got, _ := s.Web().Messages(ctx, []string{"m2", "m99"}); len(got) != 1 || string(got[0].Message) != `{"text":"edited"}` {
		t.Errorf("by id: %+v", got)
	}
	if err := s.Web().DeleteThreads(ctx, []string{"m1", "m14"}); err != nil {
		t.Fatal(err)
	}
	if threads, _ = s.Web().Threads(ctx, "@opsbot"); len(threads) != 1 || threads[0].ID != "m13" {
		t.Errorf("after deleting m1 and m14: %+v", threads)
	}
}

func ids(ms []archive.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}
