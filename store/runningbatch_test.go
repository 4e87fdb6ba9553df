package store

import (
	"context"
	"testing"
)

// A batch records its commands in one go, ids in order, and forgets them
// in one go.
func TestRunningBatchRecordsAndForgets(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	ctx := context.Background()
	ids, err := s.Jobs().AddRunningBatch(ctx, []RunningCommand{
		{Host: "web-1", Token: "a", Command: "uptime", OwnerPID: 7},
		{Host: "web-2", Token: "b", Command: "uptime", OwnerPID: 7},
	})
	if err != nil || len(ids) != 2 || ids[0] >= ids[1] {
		t.Fatalf("ids = %v, %v; want two, in order", ids, err)
	}
	rows, err := s.Jobs().RunningCommands(ctx)
	if err != nil || len(rows) != 2 || rows[0].ID != ids[0] || rows[0].Host != "web-1" || rows[1].ID != ids[1] || rows[1].Token != "b" {
		t.Fatalf("recorded = %+v, %v", rows, err)
	}
	if err := s.Jobs().RemoveRunningBatch(ctx, ids); err != nil {
		t.Fatal(err)
	}
	if rows, err := s.Jobs().RunningCommands(ctx); err != nil || len(rows) != 0 {
		t.Errorf("after forgetting both: %+v, %v", rows, err)
	}
}
