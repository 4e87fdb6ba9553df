package leader_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/store/leader"
	"github.com/opsbot/opsbot/store/leader/leasetest"
)

const token = "sa-token"

// cluster starts the Lease API over TLS and returns a service-account
// folder (ca.crt, token) and the environment that names the server.
func cluster(t *testing.T) (*leasetest.Server, string, func(string) string) {
	t.Helper()
	api := leasetest.New(token)
	srv := httptest.NewTLSServer(api)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), ca, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(strings.TrimPrefix(srv.URL, "https://"), ":")
	env := map[string]string{"KUBERNETES_SERVICE_HOST": host, "KUBERNETES_SERVICE_PORT": port}
	return api, dir, func(k string) string { return env[k] }
}

// elector contends as id, with timings short enough for a test in
// client-go's proportions.
func elector(t *testing.T, dir string, getenv func(string) string, id string) *leader.Elector {
	t.Helper()
	c, err := leader.InCluster(dir, "ops", "opsbot", getenv)
	if err != nil {
		t.Fatal(err)
	}
	e, err := leader.New(leader.Config{Client: c, Identity: id,
		LeaseDuration: 1500 * time.Millisecond, RenewDeadline: time.Second, RetryPeriod: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestOneLeaderThenHandOver(t *testing.T) {
	api, dir, env := cluster(t)
	a, b := elector(t, dir, env, "opsbot-a"), elector(t, dir, env, "opsbot-b")
	ctx := t.Context()
	gen, err := a.Acquire(ctx)
	if err != nil || gen != 0 || a.Fence() != nil {
		t.Fatalf("a: generation %d, err %v, fence %v", gen, err, a.Fence())
	}
	holdCtx, release := context.WithCancel(ctx)
	held := make(chan error, 1)
	go func() { held <- a.Hold(holdCtx) }()
	acquired := make(chan int64, 1)
	go func() { g, _ := b.Acquire(ctx); acquired <- g }()
	// b must not take the lease while a renews it: watch several renewals.
	for range 4 {
		l, _, changed := api.Lease("ops", "opsbot")
		if l.Spec.HolderIdentity != "opsbot-a" {
			t.Fatalf("holder %q while a renews", l.Spec.HolderIdentity)
		}
		select {
		case <-changed:
		case g := <-acquired:
			t.Fatalf("b acquired generation %d while a held the lease", g)
		}
	}
	release()
	if err := <-held; err != nil {
		t.Fatalf("Hold after cancel: %v", err)
	}
	if a.Fence() == nil {
		t.Fatal("a still passes the fence after letting the lease go")
	}
	if g := <-acquired; g != 1 || b.Fence() != nil {
		t.Fatalf("b: generation %d (want 1), fence %v", g, b.Fence())
	}
}

// TestPartitionStopsTheOldLeaderFirst: the API server refuses the
// leader's renewals; it stops passing the fence before the other takes
// the lease, and the generations do not overlap.
func TestPartitionStopsTheOldLeaderFirst(t *testing.T) {
	api, dir, env := cluster(t)
	a, b := elector(t, dir, env, "opsbot-a"), elector(t, dir, env, "opsbot-b")
	ctx := t.Context()
	if _, err := a.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	held := make(chan error, 1)
	go func() { held <- a.Hold(ctx) }()
	acquired := make(chan error, 1)
	go func() { _, err := b.Acquire(ctx); acquired <- err }()
	api.Refuse("opsbot-a", true)
	if err := <-acquired; err != nil {
		t.Fatal(err)
	}
	if a.Fence() == nil {
		t.Fatal("the old leader passes the fence after the new one acquired the lease")
	}
	if err := <-held; !errors.Is(err, leader.ErrLost) {
		t.Fatalf("Hold: %v, want ErrLost", err)
	}
	if a.Generation() != 0 || b.Generation() != 1 {
		t.Fatalf("generations a %d, b %d", a.Generation(), b.Generation())
	}
}

func TestConflictIsNotAnOverwrite(t *testing.T) {
	_, dir, env := cluster(t)
	c, err := leader.InCluster(dir, "ops", "opsbot", env)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := c.Get(ctx); !errors.Is(err, leader.ErrNotFound) {
		t.Fatalf("Get of no lease: %v", err)
	}
	first, err := c.Create(ctx, &leader.Lease{Spec: leader.LeaseSpec{HolderIdentity: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, &leader.Lease{}); !errors.Is(err, leader.ErrConflict) {
		t.Fatalf("second Create: %v", err)
	}
	stale := *first
	if _, err := c.Update(ctx, first); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Update(ctx, &stale); !errors.Is(err, leader.ErrConflict) {
		t.Fatalf("Update at a stale resourceVersion: %v", err)
	}
}

func TestTLSIsVerified(t *testing.T) {
	_, dir, env := cluster(t)
	// A CA file that holds another certificate than the server's.
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "another CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), ca, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := leader.InCluster(dir, "ops", "opsbot", env)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(t.Context()); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("Get from a server the CA does not sign: %v", err)
	}
}

func TestSettingsInWords(t *testing.T) {
	for _, tc := range []struct {
		lease, renew, retry time.Duration
		want                string
	}{
		{10 * time.Second, 10 * time.Second, 2 * time.Second, "longer than the renew deadline"},
		{15 * time.Second, 2 * time.Second, 2 * time.Second, "1.2 × the retry period"},
		{15 * time.Second, 10 * time.Second, 0, "positive"},
	} {
		err := leader.Check(tc.lease, tc.renew, tc.retry)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Check(%v, %v, %v) = %v, want %q", tc.lease, tc.renew, tc.retry, err, tc.want)
		}
	}
	if err := leader.Check(leader.DefaultLeaseDuration, leader.DefaultRenewDeadline, leader.DefaultRetryPeriod); err != nil {
		t.Errorf("the defaults: %v", err)
	}
	if _, err := leader.InCluster(t.TempDir(), "ops", "opsbot", func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "not in a Kubernetes pod") {
		t.Errorf("outside a pod: %v", err)
	}
}

func TestSettingsValidate(t *testing.T) {
	if err := (leader.Settings{}).Validate(); err != nil {
		t.Errorf("ha off: %v", err)
	}
	bad := leader.Settings{Enabled: true, LeaseName: "Opsbot_1", RenewDeadline: 20 * time.Second}
	err := bad.Validate()
	for _, want := range []string{"lease_name: \"Opsbot_1\" is not a Kubernetes object name", "longer than the renew deadline"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v, want %q", err, want)
		}
	}
	d := leader.Settings{Enabled: true}.WithDefaults(func(k string) string {
		return map[string]string{"POD_NAME": "opsbot-7f9-x2", "POD_NAMESPACE": "ops"}[k]
	})
	if d.Identity != "opsbot-7f9-x2" || d.Namespace != "ops" || d.LeaseName != "opsbot" || d.LeaseDuration != 15*time.Second {
		t.Errorf("defaults: %+v", d)
	}
}

// TestAdvanceMovesTheGeneration: a leader moves the Lease's generation
// on (a Lease recreated below the generations its replica holds); its
// renewals keep it, and the next leader's generation follows it. A
// process that does not lead cannot move it.
func TestAdvanceMovesTheGeneration(t *testing.T) {
	api, dir, env := cluster(t)
	a, b := elector(t, dir, env, "opsbot-a"), elector(t, dir, env, "opsbot-b")
	ctx := t.Context()
	if _, err := a.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Advance(ctx, 9); err == nil {
		t.Fatal("a process that does not lead moved the generation")
	}
	if err := a.Advance(ctx, 7); err != nil || a.Generation() != 7 {
		t.Fatalf("Advance(7): %v, generation %d", err, a.Generation())
	}
	holdCtx, release := context.WithCancel(ctx)
	held := make(chan error, 1)
	go func() { held <- a.Hold(holdCtx) }()
	for range 2 { // two renewals keep it
		_, _, changed := api.Lease("ops", "opsbot")
		<-changed
	}
	if l, _, _ := api.Lease("ops", "opsbot"); l.Spec.LeaseTransitions != 7 {
		t.Errorf("after renewals the Lease's transitions are %d, want 7", l.Spec.LeaseTransitions)
	}
	release()
	<-held
	if g, err := b.Acquire(ctx); err != nil || g != 8 {
		t.Errorf("the next leader: generation %d, %v; want 8", g, err)
	}
}
