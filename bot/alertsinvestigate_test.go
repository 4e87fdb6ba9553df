package bot

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/connectors/alerts"
)

// stalledAgent is a model that does not answer until released: it counts
// the turns running at once, and the most ever.
type stalledAgent struct {
	mu             sync.Mutex
	running, peak  int
	started, ended int
	prompts        []string
	release        chan struct{}
	// begun and idle are signalled at each turn's start and end.
	begun, idle chan struct{}
}

func newStalledAgent() *stalledAgent {
	return &stalledAgent{release: make(chan struct{}), begun: make(chan struct{}, 1000), idle: make(chan struct{}, 1000)}
}

func (s *stalledAgent) Turn(ctx context.Context, _ agent.SessionInfo, text string, emit func(agent.Event)) error {
	s.mu.Lock()
	s.running++
	s.started++
	s.peak = max(s.peak, s.running)
	s.prompts = append(s.prompts, text)
	s.mu.Unlock()
	s.begun <- struct{}{}
	defer func() {
		s.mu.Lock()
		s.running--
		s.ended++
		s.mu.Unlock()
		s.idle <- struct{}{}
	}()
	select {
	case <-s.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	emit(agent.Event{Kind: agent.TextDelta, Text: "Looked.\nSuspected cause: a stalled disk\nNext steps: replace it"})
	return nil
}

func (s *stalledAgent) Resume(context.Context, agent.SessionInfo, func(agent.Event)) (bool, error) {
	return false, nil
}

func (s *stalledAgent) counts() (started, ended, peak int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started, s.ended, s.peak
}

func investigateConfig() alerts.Config {
	c := alertConfig()
	c.Routes[0].Investigate = true
	c.MaxConcurrent = 3
	return c
}

// groupPayload is an Alertmanager v4 webhook of one firing (or resolved)
// alert of group name.
func groupPayload(name, status string) []byte {
	return fmt.Appendf(nil, `{"receiver":"opsbot","status":%q,"alerts":[{"status":%q,"labels":{"alertname":%q,"instance":"web-1:9100"},`+
		`"annotations":{"summary":"s"},"startsAt":"2026-11-28T00:10:00Z","endsAt":"2026-11-28T00:20:00Z","fingerprint":%q}],`+
		`"groupLabels":{"alertname":%q},"commonLabels":{"alertname":%q},"version":"4","groupKey":%q,"truncatedAlerts":0}`,
		status, status, name, name, name, name, "{}:"+name)
}

func (r *alertRig) record(body []byte) {
	r.t.Helper()
	if _, err := r.st.Alerts().RecordDelivery(context.Background(), "am", "", body); err != nil {
		r.t.Fatal(err)
	}
}

// A storm: 200 alert groups at once against a stalled model. Every group
// gets its thread; no more than max_concurrent investigations run at
// once; the rest say they are queued or, past the queue, that they were
// not investigated and why. Once the model answers, the queued ones run,
// still within the limit.
func TestAlertStormWithinMaxConcurrent(t *testing.T) {
	t.Parallel()
	model := newStalledAgent()
	inv := &Investigator{Agent: model, Hosts: []agent.HostInfo{{Name: "web-1"}}}
	r := newAlertRig(t, investigateConfig(), inv)
	inv.Sessions = r.st.Sessions()
	for i := range 200 {
		r.record(groupPayload(fmt.Sprintf("storm-%d", i), "firing"))
	}
	r.desk.drain(context.Background())
	roots := r.roots()
	if len(roots) != 200 {
		t.Fatalf("%d threads for 200 alert groups", len(roots))
	}
	var running, queued, storm int
	for _, m := range roots {
		switch text := m.msg.Text; {
		case strings.Contains(text, "**Investigation:** running (read-only) on `web-1`"):
			running++
		case strings.Contains(text, "**Investigation:** queued: 3 investigations are running (alerts.max_concurrent: 3)"):
			queued++
		case strings.Contains(text, "**Investigation:** not investigated: an alert storm: 3 investigations running and 6 waiting (alerts.max_concurrent: 3)"):
			storm++
		default:
			t.Errorf("a root says nothing of its investigation:\n%s", text)
		}
	}
	if running != 3 || queued != 6 || storm != 191 {
		t.Errorf("running %d, queued %d, not investigated %d; want 3, 6, 191", running, queued, storm)
	}
	close(model.release)
	for range 9 {
		<-model.idle
	}
	if started, ended, peak := model.counts(); started != 9 || ended != 9 || peak > 3 {
		t.Errorf("%d investigations started, %d ended, %d at once; want 9, 9, at most 3", started, ended, peak)
	}
}

// An alert that resolves stops its running investigation, and the root
// says so with the duration.
func TestAlertResolvedStopsItsInvestigation(t *testing.T) {
	t.Parallel()
	model := newStalledAgent()
	inv := &Investigator{Agent: model, Hosts: []agent.HostInfo{{Name: "web-1"}}}
	r := newAlertRig(t, investigateConfig(), inv)
	inv.Sessions = r.st.Sessions()
	r.record(groupPayload("disk", "firing"))
	r.desk.drain(context.Background())
	<-model.begun
	r.record(groupPayload("disk", "resolved"))
	r.desk.drain(context.Background())
	<-model.idle // the turn ended: cancelled
	inv.wg.Wait()
	root := r.roots()[0].msg.Text
	for _, want := range []string{"✅ **RESOLVED** · disk", "lasted 10 min", "**Investigation:** stopped: the alert resolved"} {
		if !strings.Contains(root, want) {
			t.Errorf("root lacks %q:\n%s", want, root)
		}
	}
	if started, ended, _ := model.counts(); started != 1 || ended != 1 {
		t.Errorf("started %d, ended %d", started, ended)
	}
}

// An investigation a restart cut off is said so on its root, and not
// started again.
func TestAlertInvestigationCutByRestart(t *testing.T) {
	t.Parallel()
	model := newStalledAgent()
	inv := &Investigator{Agent: model, Hosts: []agent.HostInfo{{Name: "web-1"}}}
	r := newAlertRig(t, investigateConfig(), inv)
	inv.Sessions = r.st.Sessions()
	r.record(groupPayload("disk", "firing"))
	r.desk.drain(context.Background())
	<-model.begun
	// A new process over the same database: the old one's turn is still
	// stalled, as if it had died.
	next := NewAlertDesk(AlertDeps{Store: r.st.Alerts(), Platforms: r.desk.d.Platforms, Config: investigateConfig(),
		Investigator: &Investigator{Agent: model, Sessions: r.st.Sessions()}, Now: r.desk.d.Now})
	next.Start(context.Background())
	next.Close()
	root := r.roots()[0].msg.Text
	if !strings.Contains(root, "**Investigation:** not investigated: cut off: opsbot restarted") {
		t.Errorf("root:\n%s", root)
	}
	if started, _, _ := model.counts(); started != 1 {
		t.Errorf("%d investigations started, want 1", started)
	}
}
