package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `opsbot alerts test` posts a saved payload to a running bot as its
// source's sender would (a bearer token; PagerDuty's signature), and the
// alert's thread opens; a wrong source is told in words.
func TestAlertsTestCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	withPD := strings.Replace(alertsConfig, "  routes:\n", "    - {name: pd, type: pagerduty, secrets: [\"\", s3cret]}\n  routes:\n", 1)
	os.WriteFile(cfg, []byte(withPD), 0o600)
	_, base := startRun(t, dir, cfg)
	testdata := filepath.Join("..", "..", "connectors", "alerts", "testdata")
	for _, tt := range []struct{ source, file string }{{"am", "am_firing.json"}, {"pd", "pd_triggered.json"}} {
		file, _ := filepath.Abs(filepath.Join(testdata, tt.file))
		code, out, stderr := runOpsbot(t, "alerts", "test", tt.source, file, "--config", cfg, "--url", base)
		if code != 0 || !strings.Contains(out, "recorded the alert (202)") {
			t.Errorf("alerts test %s: exit %d %q %q", tt.source, code, out, stderr)
		}
	}
	awaitInChannel(t, base, []string{"FIRING** · NodeDown: Node web-1 is down", "FIRING** · Checkout API error rate above 5%"})
	code, _, stderr := runOpsbot(t, "alerts", "test", "nope", cfg, "--config", cfg, "--url", base)
	if code != 2 || !strings.Contains(stderr, `no alert source is named "nope"`) || !strings.Contains(stderr, "the sources are am, pd") {
		t.Errorf("an unknown source: exit %d %q", code, stderr)
	}
	code, _, stderr = runOpsbot(t, "alerts", "test", "am", cfg, "--url", base)
	if code != 2 || !strings.Contains(stderr, "in the embedded default config (give yours with --config)") {
		t.Errorf("no --config: exit %d %q", code, stderr)
	}
}
