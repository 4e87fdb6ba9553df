package agent_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/testfake"
	"github.com/opsbot/opsbot/agent/tools"
	"github.com/opsbot/opsbot/approvals"
)

// readCommands are the commands the read tools build for readCalls, and
// what each prints on the fake fleet.
var readCommands = map[string]string{
	"sed -n '1,200p;200q' -- /var/log/app.log | head -c 65536":                                              "READ_FILE: listening on :8080\n",
	"grep -rnIsE -m 200 -C 2 -e 'ERROR|FATAL' -- /var/log/app.log":                                          "GREP: 42:ERROR db timeout\n",
	"journalctl --no-pager -o short-iso -n 50 '--unit=nginx.service' '--since=1 hour ago' '--priority=err'": "JOURNAL: nginx[12]: upstream timed out\n",
	"curl -sS -i -g --max-time 20 http://web-1:8080/health":                                                 "HTTP/1.1 503 Service Unavailable\r\n\r\nHTTP_GET: down\n",
}

// queryAPIs is a fake Prometheus and Loki on one server, speaking their
// HTTP APIs.
func queryAPIs(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v1/query":
			w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"instance":"web-1"},"value":[1764254400,"0.97"]}]}}`))
		case "/loki/api/v1/query_range":
			w.Write([]byte(`{"status":"success","data":{"resultType":"streams","result":[{"stream":{"app":"api"},"values":[["1764254400000000000","LOKI: panic: nil map"]]}]}}`))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A scripted model calls every read tool in one response, on both wire
// formats: each result reaches the next request, in the model's order,
// and none asks a person.
func TestReadToolsProbe(t *testing.T) {
	t.Parallel()
	eachWire(t, func(t *testing.T, w wire) {
		calls := []string{
			"read_file", `{"host":"web-1","path":"/var/log/app.log"}`,
			"grep", `{"host":"web-1","pattern":"ERROR|FATAL","path":"/var/log/app.log","context":2}`,
			"journal", `{"host":"web-1","unit":"nginx.service","since":"1 hour ago","priority":"err","lines":50}`,
			"http_get", `{"url":"http://web-1:8080/health"}`,
			"prometheus_query", `{"query":"node_load1"}`,
			"loki_query", `{"query":"{app=\"api\"} |= \"panic\""}`,
		}
		f, p := w.model(t, testfake.Use("c1", "Looking.", calls...), testfake.Say("Found it."))
		fl := &fleet{outputs: readCommands}
		guard := &approvals.Guard{Policy: riskyPolicy{}, Approver: approver{}, Exec: fl}
		api := queryAPIs(t)
		reg := agent.NewRegistry(&tools.ReadFile{Guard: guard}, &tools.Grep{Guard: guard}, &tools.Journal{Guard: guard}, &tools.HTTPGet{Guard: guard})
		for _, tool := range tools.QueryTools(api, api) {
			reg.Add(tool)
		}
		h, sess := sqliteSession(t)
		rec := &testfake.Recorder{}
		if err := (&agent.Agent{Provider: p, History: h, Tools: reg}).Turn(context.Background(), sess, "why is web-1 failing?", rec.Emit); err != nil {
			t.Fatal(err)
		}
		results := w.results(f.Requests()[1].Body)
		wants := []string{"READ_FILE: listening", "GREP: 42:ERROR", "JOURNAL: nginx[12]", "HTTP_GET: down", `{instance="web-1"} 0.97`, `{app="api"} LOKI: panic`}
		if len(results) != len(wants) {
			t.Fatalf("%d results; want %d (ran %q)", len(results), len(wants), fl.runs())
		}
		for i, want := range wants {
			if !strings.Contains(results[i], want) {
				t.Errorf("result %d = %q; want %q (ran %q)", i, results[i], want, fl.runs())
			}
		}
		if cards := rec.Kinds(agent.ApprovalPending); len(cards) != 0 {
			t.Errorf("the read tools asked people: %s", testfake.JSON(cards))
		}
	})
}
