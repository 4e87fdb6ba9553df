package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An alert investigation is bounded by agent.budget.alert, not by the
// far larger budget.turn: it ends with the model's summary in the
// thread, and the root says which budget ended it.
func TestAlertInvestigationKeepsToTheAlertBudget(t *testing.T) {
	t.Parallel()
	llm := &fakeLLM{t: t, usage: true} // 110 tokens a response
	llm.respond = func(req fakeLLMRequest) (string, string) {
		if strings.Contains(fmt.Sprint(req.Messages), "used its token budget") {
			return "", "Found so far: uptime answered."
		}
		return "uptime", ""
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	os.WriteFile(cfg, fmt.Appendf(nil, `web:
  listen: 127.0.0.1:0
log:
  format: json
agent:
  provider: openai
  base_url: %q
  api_key: test-key
  model: fake-model
  budget: {turn: 100000, alert: 200}
alerts:
  sources:
    - {name: am, type: alertmanager, token: tok}
  routes:
    - post_to: {platform: web, channel: ops}
      investigate: true
  host_labels: [host]
`, llm.serve(t)), 0o600)
	_, base := startRun(t, dir, cfg)
	body := firingGroup("DiskFull", `"host":"local"`, "")
	if code, err := deliverAlert(base, body); err != nil || code != http.StatusAccepted {
		t.Fatalf("delivery: %d %v", code, err)
	}
	awaitInChannel(t, base, []string{"Found so far: uptime answered.", "token budget of 200 tokens (agent.budget.alert)"})
	if n := len(llm.allRequests()); n != 3 {
		t.Errorf("%d model calls, want 3 (two steps of 110 tokens pass 200, then the summary)", n)
	}
}
