package store

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/approvals"
)

// TestGrantsNumberExpireRevokeAndSurviveReopen: grants get short numbers
// per thread, lapse at their expiry, end on revoke (once), are audited
// with their id, and are read back from the file after a reopen.
func TestGrantsNumberExpireRevokeAndSurviveReopen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "opsbot.db")
	s, err := Open(ctx, Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return now }
	a, _, _ := s.Sessions().SessionFor(ctx, ThreadKey{Platform: "web", Channel: "c", Thread: "a"})
	b, _, _ := s.Sessions().SessionFor(ctx, ThreadKey{Platform: "web", Channel: "c", Thread: "b"})
	grant := func(sess int64, cmd string, d time.Duration) approvals.Grant {
		g, err := s.Approvals().CreateGrant(ctx, approvals.Grant{SessionID: sess, Hosts: "web-1,web-2", Command: cmd, By: "web:bob",
			Approval: "ap1", CreatedAt: now, ExpiresAt: now.Add(d)})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	g1, g2, other := grant(a.ID, "systemctl restart svc-1", 30*time.Minute), grant(a.ID, "kill 12", time.Minute), grant(b.ID, "kill 1", time.Hour)
	if g1.Number != 1 || g2.Number != 2 || other.Number != 1 {
		t.Fatalf("numbers = %d, %d, %d; want 1, 2 and 1 in the other thread", g1.Number, g2.Number, other.Number)
	}
	active := func(st *Store, at time.Time) []int64 {
		gs, err := st.Approvals().ActiveGrants(ctx, a.ID, at)
		if err != nil {
			t.Fatal(err)
		}
		var ns []int64
		for _, g := range gs {
			ns = append(ns, g.Number)
		}
		return ns
	}
	if got := active(s, now); len(got) != 2 {
		t.Fatalf("active now = %v, want [1 2]", got)
	}
	if got := active(s, now.Add(time.Minute)); len(got) != 1 || got[0] != 1 {
		t.Fatalf("active after a minute = %v, want [1]: grant 2 expired", got)
	}
	if ok, err := s.Approvals().RevokeGrant(ctx, a.ID, g2.ID, "web:carol", now.Add(time.Minute)); ok || err != nil {
		t.Errorf("revoking an expired grant = %v, %v; want false", ok, err)
	}
	if err := s.Approvals().UseGrant(ctx, g1.ID, "systemctl restart svc-2", "web-1", "web:alice"); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s2, err := Open(ctx, Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	s2.Now = func() time.Time { return now }
	gs, err := s2.Approvals().ActiveGrants(ctx, a.ID, now.Add(time.Minute))
	if err != nil || len(gs) != 1 || gs[0].Command != "systemctl restart svc-1" || gs[0].Hosts != "web-1,web-2" || gs[0].By != "web:bob" || !gs[0].ExpiresAt.Equal(g1.ExpiresAt) {
		t.Fatalf("after reopen: %+v, %v", gs, err)
	}
	if ok, err := s2.Approvals().RevokeGrant(ctx, b.ID, other.ID, "web:carol", now); !ok || err != nil {
		t.Fatalf("revoke = %v, %v", ok, err)
	}
	if ok, _ := s2.Approvals().RevokeGrant(ctx, b.ID, other.ID, "web:carol", now); ok {
		t.Error("a grant was revoked twice")
	}
	trail, err := s2.Audit().AuditTrail(ctx, grantSubject(g1.ID))
	if err != nil || len(trail) != 2 || trail[0].Action != "grant.create" || trail[1].Action != "grant.use" || !strings.Contains(string(trail[1].Detail), "svc-2") {
		t.Fatalf("audit of grant 1 = %+v, %v", trail, err)
	}
	if trail, _ := s2.Audit().AuditTrail(ctx, grantSubject(other.ID)); len(trail) != 2 || trail[1].Action != "grant.revoke" || trail[1].Actor != "web:carol" {
		t.Errorf("audit of the revoked grant = %+v", trail)
	}
}
