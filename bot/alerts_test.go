package bot

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/alerts"
	"github.com/opsbot/opsbot/store"
)

// alertRig is a desk over a real database and a fake platform named web;
// deliveries are recorded as the intake does and acted on by drain.
type alertRig struct {
	t     *testing.T
	st    *store.Store
	conn  *fakeConn
	desk  *AlertDesk
	clock time.Time
}

func alertConfig() alerts.Config {
	return alerts.Config{
		Sources: []alerts.Source{
			{Name: "am", Type: alerts.TypeAlertmanager, Token: "t"},
			{Name: "pd", Type: alerts.TypePagerDuty, Secrets: []string{"s"}},
			{Name: "ci", Type: alerts.TypeGeneric, Token: "t", Fields: alerts.Fields{Title: "$.title", Status: "$.state", Dedupe: "$.id", Labels: "$.tags"}},
		},
		Routes: []alerts.Route{{PostTo: alerts.PostTo{Platform: "web", Channel: "ops"}}},
	}
}

func newAlertRig(t *testing.T, cfg alerts.Config, inv *Investigator) *alertRig {
	t.Helper()
	st, err := store.Open(context.Background(), store.Config{Path: filepath.Join(t.TempDir(), "bot.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r := &alertRig{t: t, st: st, conn: newFakeConn(connectors.Limits{MaxText: 4000}), clock: time.Date(2026, 11, 28, 0, 15, 0, 0, time.UTC)}
	r.conn.name = "web"
	st.Now = func() time.Time { return r.clock }
	r.desk = NewAlertDesk(AlertDeps{Store: st.Alerts(), Platforms: NewPlatforms(nil, nil, r.conn), Config: cfg, Investigator: inv,
		Now: func() time.Time { return r.clock }})
	t.Cleanup(r.desk.Close)
	return r
}

// deliver records a testdata payload as the intake would, and acts on
// what is open.
func (r *alertRig) deliver(source, file string) {
	r.t.Helper()
	body, err := os.ReadFile(filepath.Join("..", "connectors", "alerts", "testdata", file))
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := r.st.Alerts().RecordDelivery(context.Background(), source, "", body); err != nil {
		r.t.Fatal(err)
	}
	r.desk.drain(context.Background())
}

// roots are the messages that start a thread.
func (r *alertRig) roots() []*fakeMsg {
	var out []*fakeMsg
	for _, q := range r.conn.reqs() {
		if q.kind == "post" {
			if m := r.conn.thread(q.id); len(m) > 0 { // q.id is a thread's root
				out = append(out, m[0])
			}
		}
	}
	return out
}

func (r *alertRig) edits() int {
	n := 0
	for _, q := range r.conn.reqs() {
		if q.kind == "edit" {
			n++
		}
	}
	return n
}

// The same delivery twenty times (Alertmanager's retries and repeats
// within the minute) opens one thread and edits nothing.
func TestAlertDuplicateDeliveriesOneThread(t *testing.T) {
	t.Parallel()
	r := newAlertRig(t, alertConfig(), nil)
	for range 20 {
		r.deliver("am", "am_firing.json")
	}
	roots := r.roots()
	if len(roots) != 1 || r.edits() != 0 || len(r.conn.reqs()) != 1 {
		t.Fatalf("%d threads, %d edits, %d requests; want 1 thread, 0 edits:\n%s", len(roots), r.edits(), len(r.conn.reqs()), r.dump())
	}
	for _, want := range []string{"🔴 **FIRING** · NodeDown: Node web-1 is down", "Still firing since 00:10 UTC (last notice 00:15 UTC)", "**Alerts** (1 firing, 0 resolved)", "`instance=web-1:9100`"} {
		if !strings.Contains(roots[0].msg.Text, want) {
			t.Errorf("root lacks %q:\n%s", want, roots[0].msg.Text)
		}
	}
	if n, _ := r.st.Alerts().OpenDeliveries(context.Background(), 100); len(n) != 0 {
		t.Errorf("%d deliveries left open", len(n))
	}
}

// Firing, then an alert added, one resolved, all resolved: one thread,
// whose root shows the current set each time and ends resolved with the
// duration; a repeat later refreshes its "last notice".
func TestAlertGroupLifecycleOneThread(t *testing.T) {
	t.Parallel()
	r := newAlertRig(t, alertConfig(), nil)
	steps := []struct {
		file, want string
	}{
		{"am_firing.json", "(1 firing, 0 resolved)"},
		{"am_added.json", "(2 firing, 0 resolved)"},
		{"am_partly_resolved.json", "(1 firing, 1 resolved)"},
		{"am_resolved.json", "✅ **RESOLVED** · NodeDown\nFired 00:10 UTC, resolved 00:40 UTC (lasted 30 min)"},
	}
	for i, s := range steps {
		r.clock = r.clock.Add(time.Minute)
		if i == 1 {
			r.deliver("am", "am_firing.json") // a repeat, a minute on
			if got := r.roots()[0].msg.Text; !strings.Contains(got, "last notice 00:17 UTC") {
				t.Errorf("a repeat does not refresh its last notice:\n%s", got)
			}
		}
		r.deliver("am", s.file)
		roots := r.roots()
		if len(roots) != 1 {
			t.Fatalf("after %s: %d threads, want 1:\n%s", s.file, len(roots), r.dump())
		}
		if !strings.Contains(roots[0].msg.Text, s.want) {
			t.Errorf("after %s the root lacks %q:\n%s", s.file, s.want, roots[0].msg.Text)
		}
	}
}

// The same delivery again within a minute (a sender's retry) changes
// nothing, even across a minute on the clock; a minute later it is a new
// notice. A new user saw the root edited by an identical body 11 s on.
func TestAlertRetryWithinAMinuteChangesNothing(t *testing.T) {
	t.Parallel()
	r := newAlertRig(t, alertConfig(), nil)
	r.clock = r.clock.Truncate(time.Minute).Add(50 * time.Second)
	r.deliver("am", "am_firing.json")
	first := r.roots()[0].msg.Text
	r.clock = r.clock.Add(20 * time.Second) // the clock's minute turns
	r.deliver("am", "am_firing.json")
	if got := r.roots()[0].msg.Text; got != first {
		t.Errorf("a retry 20 s on changed the root:\n%s\nwas:\n%s", got, first)
	}
	r.clock = r.clock.Add(time.Minute)
	r.deliver("am", "am_firing.json")
	if got := r.roots()[0].msg.Text; got == first {
		t.Errorf("a repeat a minute later did not refresh the last notice:\n%s", got)
	}
}

// A PagerDuty incident and a generic alert each keep one thread from
// trigger to resolve; an acknowledgement is said on the root.
func TestAlertPagerDutyAndGenericThreads(t *testing.T) {
	t.Parallel()
	r := newAlertRig(t, alertConfig(), nil)
	r.deliver("pd", "pd_triggered.json")
	r.deliver("pd", "pd_acknowledged.json")
	if got := r.roots()[0].msg.Text; !strings.Contains(got, "acknowledged by Tenex Engineer") {
		t.Errorf("root: %s", got)
	}
	r.deliver("pd", "pd_resolved.json")
	r.deliver("ci", "ci.json")
	roots := r.roots()
	if len(roots) != 2 || !strings.Contains(roots[0].msg.Text, "✅ **RESOLVED** · Checkout API error rate above 5%") ||
		!strings.Contains(roots[1].msg.Text, "🔴 **FIRING** · Deploy of checkout failed") {
		t.Errorf("threads:\n%s", r.dump())
	}
}

// A route that asks for an investigation with no model configured says
// on the root why there is none.
func TestAlertInvestigationWithoutAModelSaysSo(t *testing.T) {
	t.Parallel()
	r := newAlertRig(t, investigateConfig(), nil)
	r.deliver("am", "am_firing.json")
	if got := r.roots()[0].msg.Text; !strings.Contains(got, "**Investigation:** not investigated: no model is configured") {
		t.Errorf("root:\n%s", got)
	}
}

// A group routed to a platform that is off is dropped with a warning and
// does not hold up the deliveries behind it.
func TestAlertRouteToAPlatformThatIsOff(t *testing.T) {
	t.Parallel()
	cfg := alertConfig()
	cfg.Routes = append([]alerts.Route{{Match: map[string]string{"alertname": "NodeDown"}, PostTo: alerts.PostTo{Platform: "slack", Channel: "C1"}}}, cfg.Routes...)
	r := newAlertRig(t, cfg, nil)
	r.deliver("am", "am_firing.json")
	r.deliver("ci", "ci.json")
	if roots := r.roots(); len(roots) != 1 || !strings.Contains(roots[0].msg.Text, "Deploy of checkout failed") {
		t.Errorf("threads:\n%s", r.dump())
	}
	if open, _ := r.st.Alerts().OpenDeliveries(context.Background(), 10); len(open) != 0 {
		t.Errorf("%d deliveries left open", len(open))
	}
}

// A sender's words cannot mention anyone, link or end a code span on the
// root.
func TestAlertRootQuotesSenderWords(t *testing.T) {
	t.Parallel()
	got := plainText("<!here> @everyone [x](http://e) **bold**\nnext", 200)
	for _, bad := range []string{"<!here>", "@everyone", "](", "**", "\n"} {
		if strings.Contains(got, bad) {
			t.Errorf("plainText kept %q: %q", bad, got)
		}
	}
	if c := codeText("a`b", 10); strings.Contains(c, "`") {
		t.Errorf("codeText kept a backtick: %q", c)
	}
}

func (r *alertRig) dump() string {
	var b strings.Builder
	for _, q := range r.conn.reqs() {
		b.WriteString(q.kind + " " + q.id + "\n")
	}
	for _, m := range r.roots() {
		b.WriteString(m.msg.Text + "\n---\n")
	}
	return b.String()
}
