package store

import (
	"context"
	"testing"
)

// An assistant thread is titled by its first question only, once, even
// when its start was recorded twice; threads of another platform or
// never started are not assistant threads.
func TestAssistantThreadsFirstQuestionOnce(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	ctx := context.Background()
	a := s.AssistantThreads("slack")
	for range 2 {
		if err := a.Started(ctx, "D1", "100.1"); err != nil {
			t.Fatal(err)
		}
	}
	var firsts []bool
	for range 2 {
		first, err := a.FirstQuestion(ctx, "D1", "100.1")
		if err != nil {
			t.Fatal(err)
		}
		firsts = append(firsts, first)
	}
	if !firsts[0] || firsts[1] {
		t.Errorf("first question reported %v; want true, then false", firsts)
	}
	if first, _ := s.AssistantThreads("discord").FirstQuestion(ctx, "D1", "100.1"); first {
		t.Error("another platform's thread of the same ids counted as an assistant thread")
	}
	for _, c := range []struct {
		channel, thread string
		want            bool
	}{{"D1", "100.1", true}, {"D1", "200.2", false}} {
		if got, err := a.Known(ctx, c.channel, c.thread); err != nil || got != c.want {
			t.Errorf("Known(%s, %s) = %v, %v; want %v", c.channel, c.thread, got, err, c.want)
		}
	}
}
