package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/connectors"
)

// fakeConnector is a platform that serves routes of its own on the shared
// listener; with fail set, its Start gives up at once, as a connector
// that cannot reach its platform does (and it never says it runs).
type fakeConnector struct {
	name    string
	fail    error
	running chan struct{}
}

func (f *fakeConnector) Running() <-chan struct{} { return f.running }

func (f *fakeConnector) Name() string              { return f.name }
func (f *fakeConnector) Limits() connectors.Limits { return connectors.Limits{MaxText: 4000} }
func (f *fakeConnector) Start(ctx context.Context, _ connectors.Handler) error {
	if f.fail != nil {
		return f.fail
	}
	close(f.running)
	<-ctx.Done()
	return nil
}
func (f *fakeConnector) Post(context.Context, connectors.Dest, connectors.Message) (connectors.Ref, error) {
	return connectors.Ref{}, nil
}
func (f *fakeConnector) Edit(context.Context, connectors.Ref, connectors.Message) error { return nil }
func (f *fakeConnector) Routes(mux *http.ServeMux) {
	mux.HandleFunc("POST /"+f.name+"/events", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, f.name+" got it") })
}

var (
	_ connectors.Connector = (*fakeConnector)(nil)
	_ router               = (*fakeConnector)(nil)
	_ runner               = (*fakeConnector)(nil)
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// Every connector starts with its own lifecycle and serves its routes on
// the one listener, beside the web chat and /healthz, /readyz, /metrics.
// One that stops on its own leaves the others running and makes /readyz
// 503, naming it.
func TestEveryConnectorStartsAndServesItsRoutes(t *testing.T) {
	t.Parallel()
	slack := &fakeConnector{name: "slack", running: make(chan struct{})}
	discord := &fakeConnector{name: "discord", fail: errors.New("gateway refused the token"), running: make(chan struct{})}
	// The bot is started once each connector runs or has stopped.
	base := startBot(t, "", runHooks{connectors: []connectors.Connector{slack, discord}})

	resp, err := http.Post(base+"/slack/events", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "slack got it" {
		t.Errorf("POST /slack/events = %d %q; want the connector's own route", resp.StatusCode, body)
	}
	for path, want := range map[string]string{"/healthz": "ok", "/metrics": "opsbot_build_info", "/api/channels": `"ops"`} {
		if code, body := get(t, base+path); code != 200 || !strings.Contains(body, want) {
			t.Errorf("GET %s = %d %.80q; want 200 with %q", path, code, body, want)
		}
	}
	code, ready := get(t, base+"/readyz")
	var rep readyReport
	if err := json.Unmarshal([]byte(ready), &rep); err != nil || code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz with discord stopped = %d %q; want 503 with JSON", code, ready)
	}
	if rep.Status != "not ready" || strings.Join(rep.Down, ",") != "connector discord" ||
		rep.Checks["connector discord"] != "gateway refused the token" || rep.Checks["connector slack"] != "ok" || rep.Checks["database"] != "ok" {
		t.Errorf("/readyz with discord stopped: %+v", rep)
	}
	// /metrics says the same, for an alert on opsbot_connector_up == 0.
	m := scrape(t, base)
	for name, want := range map[string]int{"slack": 1, "discord": 0, "web": 1} {
		if line := fmt.Sprintf("opsbot_connector_up{connector=%q} %d\n", name, want); !strings.Contains(m.raw, line) {
			t.Errorf("/metrics has no %q", line)
		}
	}
}

// on_busy moved to the bot section; the web section's is still read, with
// a warning naming the new key.
func TestOnBusyMovedToBot(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ yaml, want, warning string }{
		{"", "queue", ""},
		{"bot:\n  on_busy: cancel\n", "cancel", ""},
		{"web:\n  on_busy: cancel\n", "cancel", "c.yaml:2: web.on_busy: is deprecated: it applies to every platform now; move it to bot.on_busy"},
		{"web:\n  on_busy: cancel\nbot:\n  on_busy: queue\n", "queue", "web.on_busy: is deprecated"},
	} {
		cfg, err := parseConfig("c.yaml", []byte(tc.yaml), func(string) (string, bool) { return "", false })
		if err != nil {
			t.Fatal(err)
		}
		var warnings []string
		for _, w := range cfg.warnings() {
			warnings = append(warnings, w.Error())
		}
		if got := cfg.onBusy(); got != tc.want || !strings.Contains(strings.Join(warnings, "\n"), tc.warning) ||
			(tc.warning == "" && len(warnings) > 0) {
			t.Errorf("%q: on_busy %q, warnings %q; want %q, %q", tc.yaml, got, warnings, tc.want, tc.warning)
		}
	}
	if _, err := parseConfig("c.yaml", []byte("bot:\n  on_busy: later\n"), func(string) (string, bool) { return "", false }); err == nil ||
		!strings.Contains(err.Error(), `c.yaml:2: bot.on_busy: "later" is not a choice: use queue or cancel`) {
		t.Errorf("bad bot.on_busy: %v", err)
	}
}
