package bot

import (
	"context"
	"database/sql"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

	h.restartSwept()
	if m := h.msg(ref); len(m.msg.Buttons) != 0 {
		t.Errorf("the expired request's card still offers %d buttons: %s", len(m.msg.Buttons), h.dump())
	}
	if _, msg, err := h.st.Approvals().ApprovalCard(context.Background(), id); err != nil || msg != ref.ID {
		t.Errorf("the card's place on record is %q (%v), want %q: %s", msg, err, ref.ID, h.dump())
	}
}

// A request whose process died before its card was posted (or before
// the post was recorded) is approvable after the restart: the first
// sweep posts its card again (or records the one the thread shows), and
// an approval on it runs the command once. Before, the request stayed
// pending with no Approve button in its thread until it expired (a
// leader's pod killed a second after the request, issue 34's review).
func TestPendingRequestWhoseCardWasLostIsShownAgain(t *testing.T) {
	t.Parallel()
	for _, posted := range []bool{false, true} {
		name := "never posted"
		if posted {
			name = "posted, not recorded"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, approvals.GateConfig{}, nil)
			runs := filepath.Join(h.dir, "runs.txt")
			h.say("alice", "t1", "run local echo once >> "+runs)
			h.eventually("the approval card", h.has("t1", "Approval needed"))
			_, ref, _ := h.find("t1", "Approval needed")
			id := h.msg(ref).msg.Buttons[0].Value
			h.stop() // the process dies: its card's record, or the card, is lost
			if !posted {
				h.conn.mu.Lock()
				delete(h.conn.msgs, ref.ID)
				h.conn.order = slices.DeleteFunc(h.conn.order, func(m string) bool { return m == ref.ID })
				h.conn.mu.Unlock()
			}
			db, err := sql.Open("sqlite3", "file:"+filepath.Join(h.dir, "bot.db"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(`UPDATE approvals SET card_channel = '', card_message = '' WHERE id = ?`, id); err != nil {
				t.Fatal(err)
			}
			db.Close()

			h.restartSwept()
			if n := h.count("t1", "Approval needed"); n != 1 {
				t.Fatalf("the thread shows %d approval cards, want 1: %s", n, h.dump())
			}
			card, cref, ok := h.find("t1", "Approval needed")
			if !ok || len(card.msg.Buttons) == 0 || card.msg.Buttons[0].Value != id {
				t.Fatalf("the thread's card does not offer the request's Approve button: %s", h.dump())
			}
			if _, msg, _ := h.st.Approvals().ApprovalCard(context.Background(), id); msg != cref.ID {
				t.Errorf("the card on record is %q, the thread shows %q", msg, cref.ID)
			}
			if posted && cref.ID != ref.ID {
				t.Errorf("the card was posted again (%s) although the thread showed it (%s)", cref.ID, ref.ID)
			}
			h.click("bob", card, cref, ActionApprove)
			h.eventually("the command's run", func() bool {
				b, _ := os.ReadFile(runs)
				return strings.Count(string(b), "once") >= 1
			})
			h.settled("t1")
			if b, _ := os.ReadFile(runs); strings.Count(string(b), "once") != 1 {
				t.Errorf("the command ran %d times, want once", strings.Count(string(b), "once"))
			}
		})
	}
}

// restartSwept restarts the bot and returns once its first sweep of the
// cards on record has run (SettledAfterStart is logged after it).
func (h *harness) restartSwept() {
	h.t.Helper()
	lines := messageLog{msgs: make(chan string, 1000)}
	h.restart(botOptions{log: slog.New(lines)})
	guard := time.NewTimer(2 * time.Minute)
	defer guard.Stop()
	for settled := false; !settled; {
		select {
		case m := <-lines.msgs:
			settled = m == SettledAfterStart
		case <-guard.C:
			h.t.Fatalf("no %q within two minutes of the restart", SettledAfterStart)
		}
	}
}
