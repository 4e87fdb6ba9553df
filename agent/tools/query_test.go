package tools

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakePrometheus is a fake Prometheus speaking its HTTP API: /api/v1/query
// answers `up` with a vector, `up[1m]` with a matrix, anything else with
// the parse error Prometheus gives.
func fakePrometheus(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/api/v1/query" || r.Method != http.MethodGet {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`404 page not found`))
			return
		}
		switch r.URL.Query().Get("query") {
		case "up":
			w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[` +
				`{"metric":{"__name__":"up","instance":"web-2:9100","job":"node"},"value":[1764254400.5,"0"]},` +
				`{"metric":{"__name__":"up","instance":"web-1:9100","job":"node"},"value":[1764254400.5,"1"]}]}}`))
		case "up[1m]":
			w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[` +
				`{"metric":{"instance":"web-1:9100"},"values":[[1764254340,"1"],[1764254400,"0"]]}]}}`))
		default:
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"status":"error","errorType":"bad_data","error":"invalid parameter \"query\": 1:4: parse error: unexpected end of input inside braces"}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestPrometheusQuery(t *testing.T) {
	t.Parallel()
	tool := &PrometheusQuery{URL: fakePrometheus(t).URL + "/"}
	for _, c := range []struct{ query, want string }{
		{"up", "vector, 2 series:\n" +
			`{__name__="up", instance="web-1:9100", job="node"} 1 @2025-11-27T14:40:00Z` + "\n" +
			`{__name__="up", instance="web-2:9100", job="node"} 0 @2025-11-27T14:40:00Z` + "\n"},
		{"up[1m]", `{instance="web-1:9100"} 1 @2025-11-27T14:39:00Z, 0 @2025-11-27T14:40:00Z`},
		{"up{", "the query failed (400 Bad Request bad_data): invalid parameter \"query\": 1:4: parse error"},
	} {
		res := tool.Call(context.Background(), call("prometheus_query", jsonInput("query", c.query)))
		if !strings.Contains(res.Content, c.want) || res.IsError != strings.HasPrefix(c.want, "the query failed") {
			t.Errorf("%s: %q; want %q", c.query, res.Content, c.want)
		}
	}
}

// fakeLoki is a fake Loki speaking its HTTP API: /loki/api/v1/query_range
// answers with two streams, newest first as direction=backward asks, and
// records the parameters it got.
func fakeLoki(t *testing.T, got chan<- map[string]string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/loki/api/v1/query_range" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		q := r.URL.Query()
		got <- map[string]string{"query": q.Get("query"), "start": q.Get("start"), "end": q.Get("end"), "limit": q.Get("limit"), "direction": q.Get("direction")}
		w.Write([]byte(`{"status":"success","data":{"resultType":"streams","result":[` +
			`{"stream":{"app":"nginx","host":"web-1"},"values":[["1764254403000000000","ERROR upstream timed out"],["1764254401000000000","GET / 200"]]},` +
			`{"stream":{"app":"nginx","host":"web-2"},"values":[["1764254402000000000","GET / 502"]]}]}}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestLokiQuery(t *testing.T) {
	t.Parallel()
	got := make(chan map[string]string, 1)
	now := time.Unix(1764254405, 0)
	tool := &LokiQuery{URL: fakeLoki(t, got).URL, Now: func() time.Time { return now }}
	res := tool.Call(context.Background(), call("loki_query", jsonInput("query", `{app="nginx"} |= "error"`, "since", "15m", "limit", 5000)))
	want := "3 lines, oldest first:\n" +
		`2025-11-27T14:40:01Z {app="nginx", host="web-1"} GET / 200` + "\n" +
		`2025-11-27T14:40:02Z {app="nginx", host="web-2"} GET / 502` + "\n" +
		`2025-11-27T14:40:03Z {app="nginx", host="web-1"} ERROR upstream timed out` + "\n"
	if res.IsError || res.Content != want {
		t.Errorf("loki_query = %q; want %q", res.Content, want)
	}
	p := <-got
	start := strconv.FormatInt(now.Add(-15*time.Minute).UnixNano(), 10)
	if p["query"] != `{app="nginx"} |= "error"` || p["start"] != start || p["end"] != strconv.FormatInt(now.UnixNano(), 10) ||
		p["limit"] != "1000" || p["direction"] != "backward" {
		t.Errorf("Loki got %v", p)
	}
	if res := tool.Call(context.Background(), call("loki_query", jsonInput("query", "{}", "since", "yesterday"))); !res.IsError {
		t.Errorf("a bad since was accepted: %q", res.Content)
	}
}

// A query tool is offered only when its endpoint is configured.
func TestQueryToolsOnlyWhenConfigured(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		prom, loki string
		want       []string
	}{{"", "", nil}, {"http://prom:9090", "", []string{"prometheus_query"}}, {"", "http://loki:3100", []string{"loki_query"}},
		{"http://prom:9090", "http://loki:3100", []string{"prometheus_query", "loki_query"}}} {
		var names []string
		for _, tool := range QueryTools(c.prom, c.loki) {
			names = append(names, tool.Spec().Name)
		}
		if strings.Join(names, ",") != strings.Join(c.want, ",") {
			t.Errorf("QueryTools(%q, %q) = %v; want %v", c.prom, c.loki, names, c.want)
		}
	}
}
