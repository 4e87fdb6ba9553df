package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/opsbot/opsbot/approvals"
)

// RevokeGrant takes a grant's id, the N of its audit subject grant:N,
// and only of the thread it is asked in: another thread's grant, or this
// thread's ordinal, revokes nothing.
func TestRevokeGrantTakesTheAuditedIDOfItsOwnThread(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(ctx, Config{Path: filepath.Join(t.TempDir(), "opsbot.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Now()
	var gs []approvals.Grant
	for _, thread := range []string{"b", "a"} {
		sess, _, _ := s.Sessions().SessionFor(ctx, ThreadKey{Platform: "web", Channel: "c", Thread: thread})
		g, err := s.Approvals().CreateGrant(ctx, approvals.Grant{SessionID: sess.ID, Hosts: "web-1", Command: "kill 1", By: "web:bob",
			Approval: "ap-" + thread, CreatedAt: now, ExpiresAt: now.Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		gs = append(gs, g)
	}
	other, mine := gs[0], gs[1]
	if ok, err := s.Approvals().RevokeGrant(ctx, mine.SessionID, mine.Number, "web:carol", now); ok || err != nil {
		t.Errorf("revoking by the thread's ordinal %d (grant:%d is another thread's) = %v, %v; want false", mine.Number, other.ID, ok, err)
	}
	if ok, err := s.Approvals().RevokeGrant(ctx, mine.SessionID, mine.ID, "web:carol", now); !ok || err != nil {
		t.Fatalf("revoking grant:%d in its thread = %v, %v", mine.ID, ok, err)
	}
	trail, err := s.Audit().AuditTrail(ctx, grantSubject(mine.ID))
	if err != nil || len(trail) != 2 || trail[1].Action != "grant.revoke" {
		t.Errorf("audit of grant:%d = %+v, %v", mine.ID, trail, err)
	}
	if active, _ := s.Approvals().ActiveGrants(ctx, other.SessionID, now); len(active) != 1 {
		t.Errorf("the other thread's grant was revoked: %+v", active)
	}
}
