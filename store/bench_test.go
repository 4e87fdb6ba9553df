package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/opsbot/opsbot/checks"
)

// BenchmarkSaveCheckRun1000Hosts: design §7 targets a 1,000-host check
// report committed in ≤20 ms.
func BenchmarkSaveCheckRun1000Hosts(b *testing.B) {
	s, err := Open(context.Background(), Config{Path: b.TempDir() + "/bench.db"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	run := checks.CheckRun{Schedule: "fleet", StartedAt: time.Now(), EndedAt: time.Now()}
	for i := range 1000 {
		run.Results = append(run.Results, checks.CheckResult{Host: fmt.Sprintf("host-%04d", i), Check: "disk", OK: i%7 != 0, Output: "/dev/sda1 42% /", Duration: 25 * time.Millisecond})
	}
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Checks().SaveCheckRun(ctx, run); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendMessage is the cost of persisting one history entry, paid
// after every agent step.
func BenchmarkAppendMessage(b *testing.B) {
	s, err := Open(context.Background(), Config{Path: b.TempDir() + "/bench.db"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	sess, _, _ := s.Sessions().SessionFor(ctx, ThreadKey{Platform: "bench", Channel: "c", Thread: "t"})
	msg := Message{Role: "assistant", Content: []byte(`[{"type":"text","text":"The disk on web-1 is 42% full."}]`)}
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Sessions().AppendMessages(ctx, sess.ID, msg); err != nil {
			b.Fatal(err)
		}
	}
}
