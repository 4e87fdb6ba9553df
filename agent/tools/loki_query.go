package tools

import (
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/textcut"
)

//go:embed loki_query.md
var lokiQueryDescription string

// LokiQuery is `loki_query`: a LogQL query against the configured Loki
// (agent.loki.url), through its read-only HTTP API
// (/loki/api/v1/query_range). Registered only when the URL is configured.
type LokiQuery struct {
	URL    string
	Client *http.Client // nil: http.DefaultClient
	// Now is the clock (nil: time.Now), for "since".
	Now func() time.Time
}

var (
	_ agent.Tool       = (*LokiQuery)(nil)
	_ agent.Concurrent = (*LokiQuery)(nil)
)

// The log lines loki_query reads by default and at most.
const (
	lokiLines    = 100
	maxLokiLines = 1000
)

type lokiInput struct {
	Query string `json:"query"`
	Since string `json:"since"`
	Limit int    `json:"limit"`
}

// Spec describes the tool.
func (*LokiQuery) Spec() agent.ToolSpec {
	return spec("loki_query", lokiQueryDescription,
		`{"type":"object","properties":{"query":{"type":"string","description":"LogQL, e.g. {app=\"nginx\"} |= \"error\""},"since":{"type":"string","description":"how far back, a duration like 15m, 1h, 24h; default 1h"},"limit":{"type":"integer","description":"the newest N lines, default 100, at most 1000"}},"required":["query"]}`)
}

// Describe is the status line.
func (*LokiQuery) Describe(call agent.ToolCall) string {
	var in lokiInput
	_ = decodeInput(call, &in)
	return fmt.Sprintf("querying Loki: `%s`…", in.Query)
}

// Concurrent is true: a query only reads.
func (*LokiQuery) Concurrent(agent.ToolCall) bool { return true }

// Call runs the query over the last `since` and renders the lines, oldest
// first.
func (t *LokiQuery) Call(ctx context.Context, call agent.ToolCall) agent.ToolResult {
	var in lokiInput
	if err := decodeInput(call, &in); err != nil {
		return agent.Errorf("%v", err)
	}
	if strings.TrimSpace(in.Query) == "" {
		return agent.Errorf("loki_query needs a query")
	}
	since, err := time.ParseDuration(cmp.Or(in.Since, "1h"))
	if err != nil || since <= 0 {
		return agent.Errorf("since %q is not a duration like 15m, 1h or 24h", in.Since)
	}
	now := t.Now
	if now == nil {
		now = time.Now
	}
	end := now()
	params := url.Values{"query": {in.Query}, "direction": {"backward"},
		"limit": {strconv.Itoa(min(orDefault(in.Limit, lokiLines), maxLokiLines))},
		"start": {strconv.FormatInt(end.Add(-since).UnixNano(), 10)}, "end": {strconv.FormatInt(end.UnixNano(), 10)}}
	data, err := queryAPI(ctx, t.Client, t.URL, "/loki/api/v1/query_range", params)
	if err != nil {
		return agent.Errorf("%v", err)
	}
	text, n, err := lokiResult(data)
	if err != nil {
		return agent.Errorf("%v", err)
	}
	return agent.ToolResult{Content: textcut.Keep(text, maxToolResult, nil), Summary: fmt.Sprintf("%d lines", n)}
}

// lokiResult renders a query's data: log lines with their time and their
// stream's labels, oldest first; a metric query as Prometheus's.
func lokiResult(data json.RawMessage) (string, int, error) {
	var d struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Stream map[string]string `json:"stream"`
			Values [][2]string       `json:"values"`
		} `json:"result"`
	}
	if err := json.Unmarshal(data, &d); err != nil || d.ResultType != "streams" {
		return promResult(data) // a metric query: a vector or a matrix
	}
	type entry struct {
		ns   int64
		line string
	}
	var entries []entry
	for _, s := range d.Result {
		for _, v := range s.Values {
			ns, _ := strconv.ParseInt(v[0], 10, 64)
			entries = append(entries, entry{ns, fmt.Sprintf("%s %s %s", time.Unix(0, ns).UTC().Format(time.RFC3339Nano), labels(s.Stream), v[1])})
		}
	}
	if len(entries) == 0 {
		return "no log lines matched\n", 0, nil
	}
	slices.SortStableFunc(entries, func(a, b entry) int { return cmp.Compare(a.ns, b.ns) })
	var b strings.Builder
	fmt.Fprintf(&b, "%d lines, oldest first:\n", len(entries))
	for _, e := range entries {
		b.WriteString(strings.TrimSuffix(e.line, "\n") + "\n")
	}
	return b.String(), len(entries), nil
}
