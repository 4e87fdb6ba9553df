package main

import (
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/store"
)

// An alert's thread is listed as the alert group's, not a person's, and
// its answered investigation as an answer with its time; a person's
// answered thread says when it was answered too.
func TestSessionsListAlertThreadWords(t *testing.T) {
	t.Parallel()
	ended := time.Date(2026, 11, 28, 10, 1, 0, 0, time.Local)
	alert := store.SessionSummary{Alert: "NodeDown:\tNode web-1 is down", LastTurn: store.TurnDone, LastTurnEnded: ended}
	if got := sessionStarter(alert); got != "alert: NodeDown: Node web-1 is down" {
		t.Errorf("started by %q", got)
	}
	if got := sessionState(alert); got != "answered 2026-11-28 10:01" {
		t.Errorf("state %q", got)
	}
	if got := sessionState(store.SessionSummary{Alert: "NodeDown"}); strings.Contains(got, "no answer") {
		t.Errorf("an alert thread with no investigation: %q", got)
	}
	person := store.SessionSummary{StartedBy: "web:alice"}
	if sessionStarter(person) != "@alice" || sessionState(person) != "no answer yet" {
		t.Errorf("a person's thread: %q, %q", sessionStarter(person), sessionState(person))
	}
}
