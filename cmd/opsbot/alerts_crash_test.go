package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// alertsConfig is a config with one Alertmanager source (token tok) whose
// alerts open threads in the web chat's channel ops.
const alertsConfig = `web:
  listen: 127.0.0.1:0
log:
  format: json
alerts:
  sources:
    - {name: am, type: alertmanager, token: tok}
  routes:
    - post_to: {platform: web, channel: ops}
`

// alertWait bounds the wait for a channel's texts: a hang guard, not a
// speed bound.
var alertWait = 2 * time.Minute

// amPayload is an Alertmanager v4 webhook of one firing alert, its group
// named by name.
func amPayload(name string) []byte {
	return fmt.Appendf(nil, `{"receiver":"opsbot","status":"firing","alerts":[{"status":"firing","labels":{"alertname":%q,"instance":"web-1:9100"},`+
		`"annotations":{"summary":"test"},"startsAt":"2026-11-28T00:10:00Z","endsAt":"0001-01-01T00:00:00Z","generatorURL":"http://p","fingerprint":%q}],`+
		`"groupLabels":{"alertname":%q},"commonLabels":{"alertname":%q},"commonAnnotations":{},"externalURL":"http://am","version":"4",`+
		`"groupKey":"{}:{alertname=\"%s\"}","truncatedAlerts":0}`, name, name, name, name, name)
}

// deliverAlert posts a payload to /hooks/am and returns the status.
func deliverAlert(base string, body []byte) (int, error) {
	req, _ := http.NewRequest(http.MethodPost, base+"/hooks/am", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// awaitInChannel follows channel ops's events from the start until every
// text was shown by the bot; two minutes without them (a hang guard, not
// a speed bound) fail the test.
func awaitInChannel(t *testing.T, base string, texts []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), alertWait)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/events?channel=ops&since=0", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	missing := map[string]bool{}
	for _, s := range texts {
		missing[s] = true
	}
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	for len(missing) > 0 && lines.Scan() {
		l := lines.Text()
		if !strings.HasPrefix(l, "data:") || !strings.Contains(l, `"bot":true`) {
			continue
		}
		for s := range missing {
			if strings.Contains(l, s) {
				delete(missing, s)
			}
		}
	}
	if len(missing) > 0 {
		t.Fatalf("the channel never showed %d of the texts, e.g. %q (%v); it shows:\n%s", len(missing), first(missing), lines.Err(), channelTexts(t, base))
	}
}

func first(m map[string]bool) string {
	for k := range m {
		return k
	}
	return ""
}

// TestAlertsKilledMidIntake: `kill -9` of `opsbot run` while senders
// deliver alerts; after the restart every delivery that was answered 202
// has its thread in the channel.
func TestAlertsKilledMidIntake(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	os.WriteFile(cfg, []byte(alertsConfig), 0o600)
	bot, base := startRun(t, dir, cfg)

	var mu sync.Mutex
	var acked []string
	enough := make(chan struct{}) // closed once 40 were acknowledged
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 100 {
				name := fmt.Sprintf("crash-%d-%d-x", w, i)
				code, err := deliverAlert(base, amPayload(name))
				if err != nil {
					return // the bot is gone
				}
				if code == http.StatusAccepted {
					mu.Lock()
					acked = append(acked, name)
					if len(acked) == 40 {
						close(enough)
					}
					mu.Unlock()
				}
			}
		})
	}
	sent := make(chan struct{})
	go func() { wg.Wait(); close(sent) }()
	select {
	case <-enough:
	case <-sent:
		t.Fatal("the senders stopped before 40 deliveries were acknowledged")
	}
	bot.Process.Kill() // SIGKILL, mid-intake: the senders are still sending
	bot.Wait()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(acked) >= 400 {
		t.Fatal("every delivery was acknowledged before the kill: the test would prove nothing")
	}
	_, base = startRun(t, dir, cfg)
	var want []string
	for _, name := range acked {
		want = append(want, "FIRING** · "+name)
	}
	awaitInChannel(t, base, want)
}
