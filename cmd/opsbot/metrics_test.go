package main

import (
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Issue 17 item 4's acceptance: a real `opsbot run`, driven through the web
// API, does a chat run, a run that bob approves, a run the policy denies,
// a background job and an agent turn with a tool call; /metrics, scraped
// before and after, shows each of those in its series, and nothing of a
// user or a command in any label.
func TestMetricsMoveWithAFlow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	llm := &fakeLLM{t: t, commands: map[string]string{"disk": "df -h"}, usage: true}
	cfg := filepath.Join(dir, "opsbot.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("web:\n  listen: 127.0.0.1:0\nlog:\n  format: json\n"+
		"agent:\n  provider: openai\n  base_url: %q\n  api_key: test-key\n  model: fake-model\n"+
		"approvals:\n  approvers:\n    - web:\n        users: [alice, bob]\n", llm.serve(t))), 0o600)
	_, base := startRun(t, dir, cfg)
	before := scrape(t, base)

	c := &chatClient{t: t, base: base}
	c.listen()
	c.run("alice", "@opsbot run local echo metrics-ok")
	touched := filepath.Join(dir, "touched")
	c.run("alice", "@opsbot run local touch "+touched) // bob approves it
	if _, err := os.Stat(touched); err != nil {
		t.Fatalf("the approved command did not run: %v", err)
	}
	denied := postMessage(t, base, "@opsbot run local rm -rf /")
	awaitInThread(t, base, denied, "denied by policy")
	job := postMessage(t, base, "@opsbot run --bg local true")
	awaitInThread(t, base, job, "succeeded")
	if answer := c.run("alice", "@opsbot how full is the disk?"); !strings.Contains(answer, "The command said") {
		t.Fatalf("the agent's answer: %q", answer)
	}
	after := scrape(t, base)

	moved := func(name string, labels map[string]string, atLeast float64) {
		t.Helper()
		if d := after.value(name, labels) - before.value(name, labels); d < atLeast {
			t.Errorf("%s %v moved by %v, want at least %v", name, labels, d, atLeast)
		}
	}
	is := func(name string, labels map[string]string, want float64) {
		t.Helper()
		if got := after.value(name, labels); got != want {
			t.Errorf("%s %v = %v, want %v", name, labels, got, want)
		}
	}
	web := map[string]string{"platform": "web"}
	moved("opsbot_events_total", with(web, "kind", "message"), 5)
	moved("opsbot_events_total", with(web, "kind", "action"), 1) // bob's Approve
	moved("opsbot_turns_total", map[string]string{"result": "done"}, 1)
	moved("opsbot_turn_duration_seconds_count", nil, 1)
	openai := map[string]string{"provider": "openai-compatible"}
	moved("opsbot_model_requests_total", with(openai, "result", "ok"), 2) // the tool call, then the answer
	moved("opsbot_model_request_duration_seconds_count", openai, 2)
	moved("opsbot_model_tokens_total", with(openai, "direction", "in"), 200)
	moved("opsbot_model_tokens_total", with(openai, "direction", "out"), 20)
	moved("opsbot_commands_total", map[string]string{"decision": "allow", "result": "ok"}, 3) // echo, true (the job), df
	moved("opsbot_commands_total", map[string]string{"decision": "approve", "result": "ok"}, 1)
	moved("opsbot_commands_total", map[string]string{"decision": "deny", "result": "refused"}, 1)
	moved("opsbot_command_duration_seconds_count", map[string]string{"decision": "allow"}, 3)
	moved("opsbot_command_duration_seconds_count", map[string]string{"decision": "approve"}, 1)
	moved("opsbot_approvals_total", map[string]string{"state": "approved"}, 1)
	is("opsbot_approvals_pending", nil, 0)
	moved("opsbot_jobs_finished_total", map[string]string{"state": "succeeded"}, 1)
	is("opsbot_jobs_running", nil, 0)
	moved("opsbot_stream_update_gap_seconds_count", web, 1)
	is("opsbot_connector_up", map[string]string{"connector": "web"}, 1)
	is("opsbot_database_up", nil, 1)

	for _, l := range after.labelValues() {
		for _, secret := range []string{"alice", "bob", "touch", "metrics-ok", "df -h", touched} {
			if strings.Contains(l, secret) {
				t.Errorf("a label shows %q: %q", secret, l)
			}
		}
	}
	if t.Failed() {
		t.Logf("metrics after:\n%s", after.raw)
	}
}

// with is labels plus one more.
func with(labels map[string]string, name, value string) map[string]string {
	out := map[string]string{name: value}
	for k, v := range labels {
		out[k] = v
	}
	return out
}

// scraped is one scrape of /metrics, parsed.
type scraped struct {
	families map[string]*dto.MetricFamily
	raw      string
}

// scrape reads base's /metrics in Prometheus' text format.
func scrape(t *testing.T, base string) scraped {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %s\n%s", resp.Status, raw)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return scraped{families: fams, raw: string(raw)}
}

// value sums the samples of name whose labels include labels; name may
// end in _count or _sum for a histogram's.
func (s scraped) value(name string, labels map[string]string) float64 {
	family, part := name, ""
	if _, ok := s.families[name]; !ok {
		for _, suffix := range []string{"_count", "_sum"} {
			if base, cut := strings.CutSuffix(name, suffix); cut {
				family, part = base, suffix
			}
		}
	}
	mf, ok := s.families[family]
	if !ok {
		return 0
	}
	sum := 0.0
	for _, m := range mf.GetMetric() {
		if !hasLabels(m, labels) {
			continue
		}
		switch {
		case part == "_count":
			sum += float64(m.GetHistogram().GetSampleCount())
		case part == "_sum":
			sum += m.GetHistogram().GetSampleSum()
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		}
	}
	return sum
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	got := map[string]string{}
	for _, l := range m.GetLabel() {
		got[l.GetName()] = l.GetValue()
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// labelValues lists every label value of every opsbot_ series.
func (s scraped) labelValues() []string {
	var out []string
	for name, mf := range s.families {
		if !strings.HasPrefix(name, "opsbot_") {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				out = append(out, l.GetValue())
			}
		}
	}
	sort.Strings(out)
	return out
}

// docs/OPERATIONS.md lists every series the code registers, and no series
// the code does not have: the operator's list cannot drift from the code.
func TestOperationsListsEveryMetric(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	inCode := map[string]bool{}
	// A name is declared beside its help text: Name: "…", Help: "…";
	// NewDesc("…", "…"); or a helper's ("…", "…").
	decl := regexp.MustCompile(`"(opsbot_[a-z_]+)",\s*(?:Help:\s*)?"`)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
			inCode[m[1]] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(inCode) < 20 {
		t.Fatalf("found %d series in the code; the scan is broken", len(inCode))
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "OPERATIONS.md"))
	if err != nil {
		t.Fatal(err)
	}
	inTable := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `(opsbot_[a-z_]+)` \\|").FindAllStringSubmatch(string(doc), -1) {
		inTable[m[1]] = true
	}
	for name := range inCode {
		if !inTable[name] {
			t.Errorf("%s is registered but docs/OPERATIONS.md does not list it", name)
		}
	}
	for name := range inTable {
		if !inCode[name] {
			t.Errorf("docs/OPERATIONS.md lists %s, which no code registers", name)
		}
	}
	// The alerts name only series that exist (histograms by their _bucket).
	for _, m := range regexp.MustCompile(`opsbot_[a-z_]+`).FindAllString(string(doc), -1) {
		if base, _ := strings.CutSuffix(m, "_bucket"); !inCode[base] && !inCode[m] && m != "opsbot_" {
			t.Errorf("docs/OPERATIONS.md names %s, which no code registers", m)
		}
	}
}
