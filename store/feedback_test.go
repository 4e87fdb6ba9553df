package store

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// Feedback is one say per person per turn, counted per UTC day on the day
// it was last said: repeats change nothing, a later click replaces an
// earlier one (good then bad is bad), other people and other turns count
// apart; a value other than good or bad is refused.
func TestFeedbackByDay(t *testing.T) {
	t.Parallel()
	s, clock := openTest(t)
	ctx := context.Background()
	since := clock.Now()
	record := func(turn, user, value string, wantChanged bool) {
		t.Helper()
		changed, err := s.RecordFeedback(ctx, Feedback{Platform: "slack", TurnID: turn, UserID: user, Value: value})
		if err != nil {
			t.Fatal(err)
		}
		if changed != wantChanged {
			t.Errorf("%s's %s on turn %s changed = %v; want %v", user, value, turn, changed, wantChanged)
		}
	}
	record("1", "U1", "good", true)
	record("1", "U1", "good", false)
	record("1", "U1", "good", false)
	record("1", "U2", "good", true)
	record("2", "U1", "bad", true)
	clock.Add(24 * time.Hour)
	record("3", "U2", "good", true)
	record("3", "U2", "bad", true) // the last click wins
	record("2", "U1", "bad", false)
	if _, err := s.RecordFeedback(ctx, Feedback{Platform: "slack", TurnID: "3", UserID: "U2", Value: "meh"}); err == nil {
		t.Error("a feedback value other than good or bad was kept")
	}
	got, err := s.FeedbackByDay(ctx, since)
	if err != nil {
		t.Fatal(err)
	}
	want := []FeedbackDay{{Day: "2026-11-22", Good: 2, Bad: 1}, {Day: "2026-11-23", Bad: 1}}
	if !slices.Equal(got, want) {
		t.Errorf("feedback by day %+v; want %+v", got, want)
	}
}

// A database whose feedback kept every click upgrades to one say per
// person per turn: the rows survive, each person's latest click on each
// turn (by time, then by order of writing) is the one kept.
func TestFeedbackMigrationKeepsTheLatestClick(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "opsbot.db")
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	before := slices.Index(shipped, "0028_feedback_once.sql")
	for _, name := range shipped[:before] {
		body, err := migrationFiles.ReadFile("migrations/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, string(body)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	day := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC).Unix()
	rows := []struct {
		turn, user, value string
		at                int64
	}{
		{"Ev1", "U1", "good", day}, {"Ev1", "U1", "bad", day + 60}, {"Ev1", "U1", "good", day + 30},
		{"Ev1", "U2", "good", day}, {"Ev1", "U2", "bad", day}, // same second: the later row
		{"Ev2", "U1", "good", day + 86400},
	}
	for _, r := range rows {
		if _, err := db.ExecContext(ctx, `INSERT INTO feedback (platform, turn_id, user_id, value, at) VALUES ('slack', ?, ?, ?, ?)`,
			r.turn, r.user, r.value, r.at); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", before)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := Open(ctx, Config{Path: path})
	if err != nil {
		t.Fatalf("the upgrade failed: %v", err)
	}
	defer s.Close()
	got, err := s.FeedbackByDay(ctx, time.Unix(day, 0).Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := []FeedbackDay{{Day: "2026-11-22", Bad: 2}, {Day: "2026-11-23", Good: 1}}
	if !slices.Equal(got, want) {
		t.Errorf("feedback after the upgrade %+v; want %+v (each person's latest click per turn)", got, want)
	}
	changed, err := s.RecordFeedback(ctx, Feedback{Platform: "slack", TurnID: "Ev1", UserID: "U1", Value: "bad"})
	if err != nil || changed {
		t.Errorf("repeating a kept click: changed %v, err %v; want an unchanged row", changed, err)
	}
}
