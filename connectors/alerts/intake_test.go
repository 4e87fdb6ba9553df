package alerts

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// recorder keeps deliveries in memory, dropping a delivery id seen
// before, as the store does; fail makes every record fail.
type recorder struct {
	mu   sync.Mutex
	kept [][]byte
	ids  map[string]bool
	fail error
}

func (r *recorder) RecordDelivery(_ context.Context, source, id string, body []byte) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return false, r.fail
	}
	if id != "" {
		if r.ids[source+"/"+id] {
			return false, nil
		}
		r.ids[source+"/"+id] = true
	}
	r.kept = append(r.kept, body)
	return true, nil
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.kept)
}

func testConfig() Config {
	return Config{Sources: []Source{
		{Name: "am", Type: TypeAlertmanager, Token: "am-token"},
		{Name: "graf", Type: TypeGrafana, Token: "g-token"},
		{Name: "pd", Type: TypePagerDuty, Secrets: []string{"new-secret", "old-secret"}},
		{Name: "ci", Type: TypeGeneric, Token: "ci-token", Fields: Fields{Title: "$.title", Status: "$.state", Dedupe: "$.id", Labels: "$.tags"}},
		{Name: "closed", Type: TypeAlertmanager},
	}, Routes: []Route{{PostTo: PostTo{Platform: "web", Channel: "ops"}}}}
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type intakeFixture struct {
	srv  *httptest.Server
	rec  *recorder
	reg  *prometheus.Registry
	m    *Metrics
	kick int
}

func newIntake(t *testing.T) *intakeFixture {
	t.Helper()
	f := &intakeFixture{rec: &recorder{ids: map[string]bool{}}, reg: prometheus.NewRegistry()}
	var err error
	if f.m, err = NewMetrics(f.reg); err != nil {
		t.Fatal(err)
	}
	in := &Intake{Config: testConfig(), Record: f.rec, Metrics: f.m, Recorded: func() { f.kick++ }}
	mux := http.NewServeMux()
	in.Routes(mux)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *intakeFixture) post(t *testing.T, path string, body []byte, headers ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+path, bytes.NewReader(body))
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}

// Who may deliver: the right token or signature is kept and answered 202;
// anything else is 401 and nothing is kept, never a 5xx (a sender retries
// those).
func TestIntakeAuth(t *testing.T) {
	t.Parallel()
	am, pd, ci := readFile(t, "am_firing.json"), readFile(t, "pd_triggered.json"), readFile(t, "ci.json")
	tests := []struct {
		name    string
		path    string
		body    []byte
		headers []string
		code    int
		words   string
	}{
		{"am right token", "/hooks/am", am, []string{"Authorization", "Bearer am-token"}, 202, "recorded"},
		{"am no token", "/hooks/am", am, nil, 401, "missing or wrong token"},
		{"am wrong token", "/hooks/am", am, []string{"Authorization", "Bearer am-tokeN"}, 401, "missing or wrong token"},
		{"am token of another source", "/hooks/am", am, []string{"Authorization", "Bearer ci-token"}, 401, "missing or wrong token"},
		{"am basic auth", "/hooks/am", am, []string{"Authorization", "Basic YW06YW0tdG9rZW4="}, 401, "missing or wrong token"},
		{"source without a token", "/hooks/closed", am, []string{"Authorization", "Bearer "}, 401, "missing or wrong token"},
		{"pd new secret", "/hooks/pd", pd, []string{"X-PagerDuty-Signature", Sign("new-secret", pd), "X-Webhook-Id", "w1"}, 202, "recorded"},
		{"pd old secret during rotation", "/hooks/pd", pd, []string{"X-PagerDuty-Signature", Sign("old-secret", pd), "X-Webhook-Id", "w2"}, 202, "recorded"},
		{"pd two signatures, one ours", "/hooks/pd", pd, []string{"X-PagerDuty-Signature", Sign("other", pd) + "," + Sign("old-secret", pd), "X-Webhook-Id", "w3"}, 202, "recorded"},
		{"pd retired secret", "/hooks/pd", pd, []string{"X-PagerDuty-Signature", Sign("retired", pd)}, 401, "missing or wrong signature"},
		{"pd no signature", "/hooks/pd", pd, nil, 401, "missing or wrong signature"},
		{"pd signature of another body", "/hooks/pd", pd, []string{"X-PagerDuty-Signature", Sign("new-secret", am)}, 401, "missing or wrong signature"},
		{"pd v0 signature", "/hooks/pd", pd, []string{"X-PagerDuty-Signature", strings.Replace(Sign("new-secret", pd), "v1=", "v0=", 1)}, 401, "missing or wrong signature"},
		{"pd bearer instead", "/hooks/pd", pd, []string{"Authorization", "Bearer new-secret"}, 401, "missing or wrong signature"},
		{"generic right token", "/hooks/ci", ci, []string{"Authorization", "Bearer ci-token"}, 202, "recorded"},
		{"generic wrong token", "/hooks/ci", ci, []string{"Authorization", "Bearer am-token"}, 401, "missing or wrong token"},
		{"unknown source", "/hooks/nope", am, []string{"Authorization", "Bearer am-token"}, 404, `no alert source is named \"nope\"`},
	}
	f := newIntake(t)
	want := 0
	for _, tt := range tests {
		before := f.rec.count()
		code, body := f.post(t, tt.path, tt.body, tt.headers...)
		if code != tt.code || !strings.Contains(body, tt.words) {
			t.Errorf("%s: %d %s, want %d with %q", tt.name, code, body, tt.code, tt.words)
		}
		kept := f.rec.count() - before
		if (code == 202) != (kept == 1) || kept > 1 {
			t.Errorf("%s: answered %d and kept %d deliveries", tt.name, code, kept)
		}
		if code == 202 {
			want++
		}
	}
	if got := testutil.ToFloat64(f.m.rejected.WithLabelValues("pd", RejectUnauthorized)); got != 5 {
		t.Errorf("rejected{pd,unauthorized} = %v, want 5", got)
	}
	if f.rec.count() != want || f.kick != want {
		t.Errorf("kept %d, kicked %d, want %d", f.rec.count(), f.kick, want)
	}
}

// A body over 1 MB is 413, bad JSON or the wrong shape 400 in words, a
// record that fails 503: none is kept.
func TestIntakeRefusals(t *testing.T) {
	t.Parallel()
	auth := []string{"Authorization", "Bearer am-token"}
	big := append([]byte(`{"groupKey":"x","status":"firing","receiver":"`), bytes.Repeat([]byte("a"), MaxBody)...)
	tests := []struct {
		name  string
		path  string
		body  []byte
		code  int
		words string
	}{
		{"too large", "/hooks/am", big, 413, "over 1 MB"},
		{"not JSON", "/hooks/am", []byte("alert!"), 400, "the body is not JSON of this source's shape: it is not valid JSON (at byte 1)"},
		{"cut short", "/hooks/am", []byte(`{"alerts":[{"status":"fir`), 400, "the body is not JSON of this source's shape: it ends before its JSON does (was it cut short?)"},
		{"wrong shape", "/hooks/am", []byte(`{"alerts":"many"}`), 400, "not JSON of this source's shape: alerts is a JSON string where a list belongs"},
		{"no group key", "/hooks/am", []byte(`{"status":"firing","alerts":[]}`), 400, "no groupKey: this is not an Alertmanager webhook (version 4) payload"},
		{"bad status", "/hooks/am", []byte(`{"groupKey":"g","status":"burning"}`), 400, `status \"burning\": expected firing or resolved`},
		{"generic without its title", "/hooks/ci", []byte(`{"id":"x"}`), 400, "no title at $.title (fields.title)"},
	}
	f := newIntake(t)
	for _, tt := range tests {
		h := auth
		if tt.path == "/hooks/ci" {
			h = []string{"Authorization", "Bearer ci-token"}
		}
		code, body := f.post(t, tt.path, tt.body, h...)
		if code != tt.code || !strings.Contains(body, tt.words) {
			t.Errorf("%s: %d %s, want %d with %q", tt.name, code, body, tt.code, tt.words)
		}
	}
	f.rec.fail = errors.New("disk I/O error")
	if code, body := f.post(t, "/hooks/am", readFile(t, "am_firing.json"), auth...); code != 503 || !strings.Contains(body, "not recorded") {
		t.Errorf("a failed record: %d %s, want 503", code, body)
	}
	if n := f.rec.count(); n != 0 {
		t.Errorf("%d deliveries kept, want none", n)
	}
}

// PagerDuty's retries (the same X-Webhook-Id) are kept once and still
// answered 202, counted as duplicates.
func TestIntakePagerDutyRetriesKeptOnce(t *testing.T) {
	t.Parallel()
	f := newIntake(t)
	pd := readFile(t, "pd_triggered.json")
	for range 20 {
		if code, body := f.post(t, "/hooks/pd", pd, "X-PagerDuty-Signature", Sign("new-secret", pd), "X-Webhook-Id", "same"); code != 202 {
			t.Fatalf("%d %s", code, body)
		}
	}
	if n := f.rec.count(); n != 1 {
		t.Errorf("kept %d, want 1", n)
	}
	if got := testutil.ToFloat64(f.m.duplicate.WithLabelValues("pd")); got != 19 {
		t.Errorf("duplicates = %v, want 19", got)
	}
}
