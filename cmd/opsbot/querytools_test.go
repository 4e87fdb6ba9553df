package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
)

// agent.prometheus.url offers the model prometheus_query; without
// agent.loki.url, loki_query is not offered.
func TestConfiguredPrometheusOffersItsTool(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	llm := &fakeLLM{t: t, say: []string{"all fine"}}
	yaml := fmt.Sprintf("web:\n  listen: 127.0.0.1:0\nstore:\n  path: %q\nbot:\n  data_dir: %q\n"+
		"agent:\n  provider: openai\n  base_url: %q\n  api_key: test-key\n  model: fake-model\n  prometheus:\n    url: http://127.0.0.1:9/\n",
		filepath.Join(dir, "opsbot.db"), filepath.Join(dir, "data"), llm.serve(t))
	base, _ := startBotYAML(t, dir, yaml)
	thread := postMessage(t, base, "@opsbot how is the disk?")
	awaitInThread(t, base, thread, "all fine")
	reqs := llm.allRequests()
	if len(reqs) == 0 {
		t.Fatal("no request reached the model")
	}
	var offered []string
	for _, tool := range reqs[0].Tools {
		offered = append(offered, tool.Function.Name)
	}
	if !slices.Contains(offered, "prometheus_query") || slices.Contains(offered, "loki_query") {
		t.Errorf("tools offered: %v; want prometheus_query and not loki_query", offered)
	}
}
