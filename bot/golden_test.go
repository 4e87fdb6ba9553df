package bot

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/checks"
	"github.com/opsbot/opsbot/connectors"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestMain shows times in UTC, as the goldens do, wherever the tests run.
func TestMain(m *testing.M) {
	time.Local = time.UTC
	os.Exit(m.Run())
}

// The neutral messages, as every connector receives them: each connector
// adds goldens of its own rendering of the same messages.
func TestNeutralMessageGoldens(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC)
	card := func(state approvals.ApprovalState, by string, decided time.Duration) connectors.Message {
		a := approvals.Approval{ID: "0f3c9a", Host: "web-1", Command: "systemctl restart nginx", Cwd: "/srv/app",
			Reasons: []string{"systemctl restart: changes a service"}, Requester: "slack:U04ALICE", Channel: "C-ops", Quorum: 1,
			State: state, DecidedBy: by, CreatedAt: created, ExpiresAt: created.Add(15 * time.Minute)}
		if state != approvals.ApprovalPending {
			a.DecidedAt = created.Add(decided)
		}
		return cardMessage(a, "@U04BOB or @U04CAROL")
	}
	rep := checks.Report{Schedule: "nightly", At: created, Zone: time.UTC, Checks: []string{"disk"}, Hosts: []string{"web-1"}}
	goldens := map[string]connectors.Message{
		"card_pending":     card(approvals.ApprovalPending, "", 0),
		"card_approved":    card(approvals.ApprovalApproved, "slack:U04BOB", 2*time.Minute),
		"card_denied":      card(approvals.ApprovalDenied, "slack:U04BOB", 3*time.Minute),
		"card_self_denied": card(approvals.ApprovalDenied, "slack:U04ALICE", time.Minute),
		"card_expired":     card(approvals.ApprovalExpired, approvals.ExpiryActor, 15*time.Minute),
		"job_notice":       jobNotice("job 7 (`df -h` on web-1) succeeded: exit 0 in 3s"),
		"help":             {Text: helpText},
		"health_report":    rep.Summary(3000),
	}
	for name, m := range goldens {
		// A mention shows as {@id}: the placeholder itself is invisible.
		marked := func(s string) string {
			return connectors.RenderMentions(s, func(id string) string { return "{@" + id + "}" })
		}
		m.Text, m.Context = marked(m.Text), marked(m.Context)
		got, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		path := filepath.Join("testdata", name+".golden.json")
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test ./bot -run Goldens -update writes it)", err)
		}
		if string(got) != string(want) {
			t.Errorf("%s differs from %s:\n%s", name, path, got)
		}
	}
}
