package approvals

import (
	"context"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"
)

// TestExpiryInBubble: a request nobody votes on is expired by its waiter
// at exactly its deadline, against the real SQLite store, with time faked
// by synctest (the store and its database/sql goroutines live and die in
// the bubble).
func TestExpiryInBubble(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		voteAt   time.Duration // 0: nobody votes
		want     ApprovalState
		wantBy   string
		waitTime time.Duration
	}{
		{name: "nobody votes", want: ApprovalExpired, wantBy: ExpiryActor, waitTime: 15 * time.Minute},
		{name: "approved a second before", voteAt: 15*time.Minute - time.Second, want: ApprovalApproved, wantBy: "slack:U2", waitTime: 15*time.Minute - time.Second},
		{name: "clicked at the deadline", voteAt: 15 * time.Minute, want: ApprovalExpired, wantBy: ExpiryActor, waitTime: 15 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			synctest.Test(t, func(t *testing.T) {
				st := openStore(t, filepath.Join(dir, "opsbot.db"), nil)
				defer st.Close()
				g := NewGate(st, GateConfig{Approvers: testApprovers}, GateOptions{})
				start := time.Now()
				type outcome struct {
					r  Result
					at time.Duration
				}
				done := make(chan outcome, 1)
				go func() {
					a, err := g.Open(context.Background(), Request{Host: "web-1", Command: "reboot", Requester: slack("U1")})
					if err != nil {
						t.Error(err)
					}
					r, err := g.Wait(context.Background(), a.ID)
					if err != nil {
						t.Error(err)
					}
					done <- outcome{r, time.Since(start)}
				}()
				synctest.Wait()
				if tt.voteAt > 0 {
					time.Sleep(tt.voteAt)
					// At the deadline itself the waiter's timer and this
					// click fire at the same instant, in either order: the
					// request may already be gone from the pending list.
					pending, err := g.Pending(context.Background())
					if err != nil || len(pending) > 1 || len(pending) == 0 && tt.voteAt < 15*time.Minute {
						t.Fatalf("pending: %v %v", pending, err)
					}
					for _, p := range pending {
						if _, err := g.Vote(context.Background(), p.ID, slack("U2"), VoteApprove); err != nil {
							t.Fatal(err)
						}
					}
				}
				o := <-done
				if o.r.Outcome != tt.want || o.r.DecidedBy != tt.wantBy {
					t.Errorf("outcome %s by %s, want %s by %s", o.r.Outcome, o.r.DecidedBy, tt.want, tt.wantBy)
				}
				if o.at != tt.waitTime {
					t.Errorf("decided after %v, want %v", o.at, tt.waitTime)
				}
			})
		})
	}
}
