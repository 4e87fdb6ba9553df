package store

import (
	"context"
	"testing"
	"time"
)

// A thread's tokens add up over its day and start again the next UTC
// day; another thread's are its own.
func TestTokensAddUpPerThreadPerDay(t *testing.T) {
	t.Parallel()
	s, clock := openTest(t)
	ctx := context.Background()
	a, _, _ := s.Sessions().SessionFor(ctx, ThreadKey{Platform: "web", Channel: "ops", Thread: "t1"})
	b, _, _ := s.Sessions().SessionFor(ctx, ThreadKey{Platform: "web", Channel: "ops", Thread: "t2"})
	if _, err := s.Sessions().AddTokens(ctx, a.ID, TokenUsage{Input: 100, Cached: 40, Output: 10}); err != nil {
		t.Fatal(err)
	}
	day, err := s.Sessions().AddTokens(ctx, a.ID, TokenUsage{Input: 200, Cached: 150, Output: 20})
	if want := (TokenUsage{Input: 300, Cached: 190, Output: 30}); err != nil || day != want || day.Total() != 330 {
		t.Errorf("day after two calls = %+v, %v; want %+v (330 in all)", day, err, want)
	}
	if other, err := s.Sessions().TokensToday(ctx, b.ID); err != nil || other != (TokenUsage{}) {
		t.Errorf("the other thread's day = %+v, %v; want nothing", other, err)
	}
	if today, _ := s.Sessions().TokensToday(ctx, a.ID); today.Total() != 330 {
		t.Errorf("today = %+v; want 330 in all", today)
	}
	clock.Add(21 * time.Hour) // 00:00 UTC the next day
	if today, err := s.Sessions().TokensToday(ctx, a.ID); err != nil || today != (TokenUsage{}) {
		t.Errorf("the next day starts at %+v, %v; want nothing", today, err)
	}
	if day, _ := s.Sessions().AddTokens(ctx, a.ID, TokenUsage{Input: 5, Output: 1}); day.Total() != 6 {
		t.Errorf("the next day's first call counts %+v; want 6 in all", day)
	}
}
