package store

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
)

// A command that runs outside its thread's turn (an approved command's
// follow-up, a plan's step) is filed under the thread its audit row names,
// by session id or by thread label, even while another thread's turn runs;
// only a row that names neither falls back to the running turn.
func TestMemoryFilesACommandUnderTheThreadItsRowNames(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	ctx := context.Background()
	planned, _, _ := s.Sessions().SessionFor(ctx, ThreadKey{Platform: "web", Channel: "ops", Thread: "m1"})
	labelled, _, _ := s.Sessions().SessionFor(ctx, ThreadKey{Platform: "web", Channel: "ops", Thread: "m5"})
	busy, _, _ := s.Sessions().SessionFor(ctx, ThreadKey{Platform: "web", Channel: "ops", Thread: "m9"})
	turn, _ := s.Sessions().BeginTurn(ctx, busy.ID)
	defer s.Sessions().EndTurn(ctx, turn.ID, TurnDone)

	end := func(command, tag string) {
		t.Helper()
		e := AuditEntry{Actor: "opsbot", Action: "command.end", Subject: "host:local", At: s.Now(),
			Detail: json.RawMessage(fmt.Sprintf(`{"command":%q,"exit_code":0%s}`, command, tag))}
		if err := s.Audit().Audit(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	end("touch /tmp/planstep", fmt.Sprintf(`,"session_id":%d`, planned.ID))
	end("touch /tmp/labelled", `,"thread":"web/ops/m5"`)
	end("touch /tmp/unnamed", "")

	for command, want := range map[string]int64{
		"touch /tmp/planstep": planned.ID, "touch /tmp/labelled": labelled.ID, "touch /tmp/unnamed": busy.ID,
	} {
		hits, err := s.Memory().Search(ctx, MemoryQuery{Text: command})
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, h := range hits {
			if h.Kind == MemoryCommand && h.Text == command {
				got = append(got, h.SessionID)
			}
		}
		if len(got) != 1 || got[0] != want {
			t.Errorf("%q filed under sessions %v; want [%d]", command, got, want)
		}
	}
}
