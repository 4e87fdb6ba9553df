package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/textcut"
)

//go:embed prometheus_query.md
var prometheusQueryDescription string

// PrometheusQuery is `prometheus_query`: a PromQL query against the
// configured Prometheus (agent.prometheus.url), through its read-only
// HTTP API (/api/v1/query). Registered only when the URL is configured.
type PrometheusQuery struct {
	URL    string
	Client *http.Client // nil: http.DefaultClient
}

var (
	_ agent.Tool       = (*PrometheusQuery)(nil)
	_ agent.Concurrent = (*PrometheusQuery)(nil)
)

// Spec describes the tool.
func (*PrometheusQuery) Spec() agent.ToolSpec {
	return spec("prometheus_query", prometheusQueryDescription,
		`{"type":"object","properties":{"query":{"type":"string","description":"PromQL"},"time":{"type":"string","description":"evaluation time, RFC 3339 or unix seconds; default now"}},"required":["query"]}`)
}

// Describe is the status line.
func (*PrometheusQuery) Describe(call agent.ToolCall) string {
	var in struct{ Query string }
	_ = decodeInput(call, &in)
	return fmt.Sprintf("querying Prometheus: `%s`…", in.Query)
}

// Concurrent is true: a query only reads.
func (*PrometheusQuery) Concurrent(agent.ToolCall) bool { return true }

// Call runs the query and renders its result, one series a line.
func (t *PrometheusQuery) Call(ctx context.Context, call agent.ToolCall) agent.ToolResult {
	var in struct {
		Query string `json:"query"`
		Time  string `json:"time"`
	}
	if err := decodeInput(call, &in); err != nil {
		return agent.Errorf("%v", err)
	}
	if strings.TrimSpace(in.Query) == "" {
		return agent.Errorf("prometheus_query needs a query")
	}
	params := url.Values{"query": {in.Query}}
	if in.Time != "" {
		params.Set("time", in.Time)
	}
	data, err := queryAPI(ctx, t.Client, t.URL, "/api/v1/query", params)
	if err != nil {
		return agent.Errorf("%v", err)
	}
	text, n, err := promResult(data)
	if err != nil {
		return agent.Errorf("%v", err)
	}
	return agent.ToolResult{Content: textcut.Keep(text, maxToolResult, nil), Summary: fmt.Sprintf("%d series", n)}
}

// promResult renders a query's data: each series with its labels and its
// value (a vector) or values (a matrix), sorted by labels.
func promResult(data json.RawMessage) (string, int, error) {
	var d struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return "", 0, fmt.Errorf("the answer is not a Prometheus result: %v", err)
	}
	switch d.ResultType {
	case "scalar", "string":
		var s sample
		err := json.Unmarshal(d.Result, &s)
		return d.ResultType + ": " + s.String() + "\n", 1, err
	}
	var series []struct {
		Metric map[string]string `json:"metric"`
		Value  *sample           `json:"value"`
		Values []sample          `json:"values"`
	}
	if err := json.Unmarshal(d.Result, &series); err != nil {
		return "", 0, fmt.Errorf("the answer is not a Prometheus result: %v", err)
	}
	lines := make([]string, len(series))
	for i, s := range series {
		vals := s.Values
		if s.Value != nil {
			vals = []sample{*s.Value}
		}
		strs := make([]string, len(vals))
		for j, v := range vals {
			strs[j] = v.String()
		}
		lines[i] = labels(s.Metric) + " " + strings.Join(strs, ", ")
	}
	slices.Sort(lines)
	if len(lines) == 0 {
		return d.ResultType + ": no series matched\n", 0, nil
	}
	return fmt.Sprintf("%s, %d series:\n%s\n", d.ResultType, len(lines), strings.Join(lines, "\n")), len(lines), nil
}
