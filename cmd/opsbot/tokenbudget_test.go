package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// agent.budget.turn in force, end to end: the answer that reaches it ends
// with the model's summary, then says which budget it reached; the
// command the crossing response asked for does not run; /metrics counts
// the tokens by kind.
func TestTokenBudgetEndsTheAnswerWithItsSummary(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	llm := &fakeLLM{t: t, usage: true} // 110 tokens a response
	llm.respond = func(req fakeLLMRequest) (string, string) {
		if strings.Contains(fmt.Sprint(req.Messages), "used its token budget") {
			return "", "Found so far: uptime answered."
		}
		return "uptime", ""
	}
	yaml := fmt.Sprintf("web:\n  listen: 127.0.0.1:0\nstore:\n  path: %q\nbot:\n  data_dir: %q\n"+
		"agent:\n  provider: openai\n  base_url: %q\n  api_key: test-key\n  model: fake-model\n  budget:\n    turn: 200\n",
		filepath.Join(dir, "opsbot.db"), filepath.Join(dir, "data"), llm.serve(t))
	base, _ := startBotYAML(t, dir, yaml)
	thread := postMessage(t, base, "@opsbot is local up?")
	awaitInThread(t, base, thread, "reached its token budget of 200 tokens")
	shown := threadTexts(t, base, thread)
	summary, note := strings.Index(shown, "Found so far: uptime answered."), strings.Index(shown, "stopped: this answer reached its token budget of 200 tokens")
	if summary < 0 || note < 0 || summary > note {
		t.Errorf("the thread does not answer before the budget note:\n%s", shown)
	}
	reqs := llm.allRequests()
	var results []string
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == "tool" {
			results = append(results, fmt.Sprint(m.Content))
		}
	}
	if len(reqs) != 3 || len(results) != 2 || !strings.Contains(results[1], "not run: the turn reached its token budget") {
		t.Errorf("%d requests; the last one's tool results: %q; want the uptime that ran, then one that did not", len(reqs), results)
	}
	m := scrape(t, base)
	if in, out := m.value("opsbot_llm_tokens_total", map[string]string{"kind": "input"}), m.value("opsbot_llm_tokens_total", map[string]string{"kind": "output"}); in != 300 || out != 30 {
		t.Errorf("opsbot_llm_tokens_total input %v, output %v; want 300 and 30 (three responses)", in, out)
	}
}
