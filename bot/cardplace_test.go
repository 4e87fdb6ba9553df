package bot

import (
	"context"
	"database/sql"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/store"
)

// A card posted just before a crash, whose place the bot never recorded
// (the kill came between the post and SetApprovalCard), still shows its
// decision once its request is decided: the restart's first sweep finds
// it in its thread (connectors.ButtonFinder) and edits it. Before, only a
// card whose place was on record was ever edited, and this one kept its
// Approve and Deny buttons for good (the kill loop's 2 of 366).
func TestCardWhosePlaceWasNotRecordedShowsItsDecision(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, nil)
	h.say("alice", "t1", "run local echo unplaced >> "+filepath.Join(h.dir, "runs.txt"))
	h.eventually("the approval card", h.has("t1", "Approval needed"))
	_, ref, _ := h.find("t1", "Approval needed")
	id := h.msg(ref).msg.Buttons[0].Value
	h.stop() // a crash between the card's post and its record, then the expiry
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(h.dir, "bot.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE approvals SET card_channel = '', card_message = '' WHERE id = ?`, id); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), store.Config{Path: filepath.Join(h.dir, "bot.db")})
	if err != nil {
		t.Fatal(err)
	}
	if ok, _, err := st.Approvals().DecideApproval(context.Background(), id, approvals.ApprovalExpired, "opsbot:expiry"); !ok || err != nil {
		t.Fatalf("expire the request: %v %v", ok, err)
	}
	st.Close()

	lines := messageLog{msgs: make(chan string, 1000)}
	h.restart(botOptions{log: slog.New(lines)})
	guard := time.NewTimer(2 * time.Minute)
	defer guard.Stop()
	for settled := false; !settled; { // logged after the first sweep of stale cards
		select {
		case m := <-lines.msgs:
			settled = m == SettledAfterStart
		case <-guard.C:
			t.Fatalf("no %q within two minutes of the restart", SettledAfterStart)
		}
	}
	if m := h.msg(ref); len(m.msg.Buttons) != 0 {
		t.Errorf("the expired request's card still offers %d buttons: %s", len(m.msg.Buttons), h.dump())
	}
	if _, msg, err := h.st.Approvals().ApprovalCard(context.Background(), id); err != nil || msg != ref.ID {
		t.Errorf("the card's place on record is %q (%v), want %q: %s", msg, err, ref.ID, h.dump())
	}
}
