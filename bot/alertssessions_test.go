package bot

import (
	"context"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/store"
)

// An investigation is its thread's turn, noted as a person's question's
// turn is: running while it runs, done once it answered, so that
// `opsbot sessions list` names the alert thread and says it was answered
// (a new user saw "idle (no answer yet)" after the answer was posted).
func TestAlertInvestigationIsRecordedAsTheThreadsTurn(t *testing.T) {
	t.Parallel()
	model := newStalledAgent()
	inv := &Investigator{Agent: model, Hosts: []agent.HostInfo{{Name: "web-1"}}}
	r := newAlertRig(t, investigateConfig(), inv)
	inv.Sessions = r.st.Sessions()
	r.record(groupPayload("disk", "firing"))
	r.desk.drain(context.Background())
	<-model.begun
	list := listAlertSessions(t, r.st)
	if list[0].LastTurn != store.TurnRunning {
		t.Errorf("while it investigates, the thread's last turn is %q; want running", list[0].LastTurn)
	}
	close(model.release)
	<-model.idle
	inv.wg.Wait()
	list = listAlertSessions(t, r.st)
	if s := list[0]; s.LastTurn != store.TurnDone || s.LastTurnEnded.IsZero() || s.Alert != "disk" {
		t.Errorf("after its answer: last turn %q ended %v, alert %q; want done, a time, \"disk\"", s.LastTurn, s.LastTurnEnded, s.Alert)
	}
}

func listAlertSessions(t *testing.T, st *store.Store) []store.SessionSummary {
	t.Helper()
	list, err := st.Sessions().ListSessions(context.Background(), 0)
	if err != nil || len(list) != 1 {
		t.Fatalf("ListSessions = %+v, %v; want the alert's thread", list, err)
	}
	return list
}
