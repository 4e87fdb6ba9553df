package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/opsbot/opsbot/agent"
)

// The bounds of one query to Prometheus or Loki: how long it may take,
// how much of the answer is read.
const (
	queryTimeout = 30 * time.Second
	maxQueryBody = 4 << 20
)

// apiResponse is the envelope Prometheus and Loki answer in.
type apiResponse struct {
	Status    string          `json:"status"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
	Data      json.RawMessage `json:"data"`
}

// queryAPI GETs base+path with params from an HTTP API that answers in
// the Prometheus envelope, and returns its data, or an error in the
// server's own words (a bad query says what is wrong with it).
func queryAPI(ctx context.Context, client *http.Client, base, path string, params url.Values) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+path+"?"+params.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("the configured URL %q is not usable: %v", base, err)
	}
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("could not reach %s: %v", req.URL.Host, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxQueryBody))
	if err != nil {
		return nil, fmt.Errorf("reading the answer of %s: %v", req.URL.Host, err)
	}
	var env apiResponse
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, fmt.Errorf("%s answered %s, not a query result: %.200s", req.URL.Host, resp.Status, body)
	}
	if env.Status != "success" {
		return nil, fmt.Errorf("the query failed (%s %s): %s", resp.Status, env.ErrorType, env.Error)
	}
	return env.Data, nil
}

// sample is one value of a series: [unix seconds, "value"].
type sample [2]any

func (s sample) String() string {
	ts, _ := s[0].(float64)
	return fmt.Sprintf("%v @%s", s[1], time.Unix(0, int64(ts*1e9)).UTC().Format(time.RFC3339))
}

// labels renders a label set as PromQL writes it, sorted.
func labels(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%q", k, m[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// QueryTools are the query tools of the endpoints configured: a tool
// whose URL is empty is not offered (agent.prometheus.url,
// agent.loki.url).
func QueryTools(prometheusURL, lokiURL string) []agent.Tool {
	var out []agent.Tool
	if prometheusURL != "" {
		out = append(out, &PrometheusQuery{URL: prometheusURL})
	}
	if lokiURL != "" {
		out = append(out, &LokiQuery{URL: lokiURL})
	}
	return out
}
