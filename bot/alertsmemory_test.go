package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/connectors/alerts"
	"github.com/opsbot/opsbot/store"
)

// incident is one entry of testdata/incidents.json: an alert on a host,
// investigated once (its answer and the commands that ran), and fired
// again days later in other words.
type incident struct {
	AlertName string `json:"alertname"`
	Host      string `json:"host"`
	First     struct {
		Title, Summary, Answer string
		Commands               []string
	}
	Repeat struct {
		Title, Summary string
		AfterDays      int `json:"after_days"`
	}
}

func alertState(inc incident, title, summary string, at time.Time) *groupState {
	labels := map[string]string{"alertname": inc.AlertName, "instance": inc.Host + ":9100", "severity": "page"}
	return &groupState{Title: title, Labels: labels, Since: at, Investigation: investigationState{Targets: []string{inc.Host}},
		Alerts: []alerts.Alert{{ID: "f", Status: "firing", Labels: labels, Annotations: map[string]string{"summary": summary}, StartsAt: at}}}
}

// The replay corpus (issue 33's acceptance): 20 incidents on 20 hosts,
// each investigated, then fired again later in other words. The
// repeat's first model request (its investigation prompt) quotes the
// earlier thread — its reference, conclusion and fix — in at least 16
// of 20; the figure is printed.
func TestAlertRepeatRecallsTheEarlierThread(t *testing.T) {
	raw, err := os.ReadFile("testdata/incidents.json")
	if err != nil {
		t.Fatal(err)
	}
	var corpus []incident
	if err := json.Unmarshal(raw, &corpus); err != nil || len(corpus) != 20 {
		t.Fatalf("corpus: %d incidents, %v; want 20", len(corpus), err)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{Path: filepath.Join(t.TempDir(), "opsbot.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	clock := time.Date(2026, 10, 1, 3, 0, 0, 0, time.UTC)
	st.Now = func() time.Time { return clock }
	for i, inc := range corpus {
		replayInvestigation(t, st, i, inc, clock)
		clock = clock.Add(time.Hour)
	}
	recalled := 0
	for i, inc := range corpus {
		at := clock.AddDate(0, 0, inc.Repeat.AfterDays)
		prompt := investigationPrompt(groupID{"am", fmt.Sprintf("again-%d", i)}, alertState(inc, inc.Repeat.Title, inc.Repeat.Summary, at), st.Memory())
		fix := inc.First.Commands[len(inc.First.Commands)-1]
		if strings.Contains(prompt, fmt.Sprintf("thread slack C1/first-%d", i)) && strings.Contains(prompt, "seen before: 1 time(s)") &&
			strings.Contains(prompt, "fixed by (the last command that succeeded): "+fix) {
			recalled++
		} else {
			t.Logf("incident %d (%s on %s) not recalled:\n%s", i, inc.AlertName, inc.Host, prompt)
		}
	}
	t.Logf("repeats whose first request carried the earlier thread: %d of %d", recalled, len(corpus))
	fmt.Printf("alert memory replay: %d of %d repeats recalled the earlier thread\n", recalled, len(corpus))
	if recalled < 16 {
		t.Errorf("%d of 20 repeats recalled the earlier thread; want at least 16", recalled)
	}
}

// replayInvestigation writes what the first occurrence left in the
// store: the alert group and its thread, the investigation's turn, its
// answer and the commands it ran (audit rows, as the executor writes).
func replayInvestigation(t *testing.T, st *store.Store, i int, inc incident, at time.Time) {
	t.Helper()
	ctx := context.Background()
	state, _ := json.Marshal(alertState(inc, inc.First.Title, inc.First.Summary, at))
	g := store.AlertGroup{Source: "am", Key: fmt.Sprintf("first-%d", i), Platform: "slack", Channel: "C1", Thread: fmt.Sprintf("first-%d", i), Status: "firing", State: state}
	if err := st.Alerts().SaveAlertGroup(ctx, g, 0); err != nil {
		t.Fatal(err)
	}
	sess, _, err := st.Sessions().SessionFor(ctx, store.ThreadKey{Platform: "slack", Channel: "C1", Thread: g.Thread})
	if err != nil {
		t.Fatal(err)
	}
	turn, _ := st.Sessions().BeginTurn(ctx, sess.ID)
	for _, c := range inc.First.Commands {
		detail, _ := json.Marshal(map[string]any{"command": c, "exit_code": 0})
		if err := st.Audit().Audit(ctx, store.AuditEntry{Actor: "alert:am", Action: "command.end", Subject: "host:" + inc.Host, Detail: detail}); err != nil {
			t.Fatal(err)
		}
	}
	answer, _ := json.Marshal([]map[string]string{{"type": "text", "text": inc.First.Answer}})
	if _, err := st.Sessions().AppendMessages(ctx, sess.ID, store.Message{Role: "assistant", Content: answer}); err != nil {
		t.Fatal(err)
	}
	st.Sessions().EndTurn(ctx, turn.ID, store.TurnDone)
}
