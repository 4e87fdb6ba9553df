package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// A turn cut by its time limit still answers in the thread: the model is
// asked once more, without tools, and its summary comes before the note
// that the time ran out (it used to end with the note alone).
func TestTimeLimitedTurnStillAnswers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	llm := &fakeLLM{t: t}
	llm.respond = func(req fakeLLMRequest) (string, string) {
		if strings.Contains(fmt.Sprint(req.Messages), "reached its time limit and no more tools can run") {
			return "", "Found so far: the sleep on local was still running when time ran out."
		}
		return "sleep 30", ""
	}
	yaml := fmt.Sprintf("web:\n  listen: 127.0.0.1:0\nstore:\n  path: %q\nbot:\n  data_dir: %q\n"+
		"agent:\n  provider: openai\n  base_url: %q\n  api_key: test-key\n  model: fake-model\n  turn_timeout: 3s\n",
		filepath.Join(dir, "opsbot.db"), filepath.Join(dir, "data"), llm.serve(t))
	base, _ := startBotYAML(t, dir, yaml)
	thread := postMessage(t, base, "@opsbot why is local slow?")
	awaitInThread(t, base, thread, "reached its time limit")
	shown := threadTexts(t, base, thread)
	summary, note := strings.Index(shown, "Found so far:"), strings.Index(shown, "stopped: this answer reached its time limit")
	if summary < 0 || note < 0 || summary > note {
		t.Errorf("the thread does not answer before the time-limit note:\n%s", shown)
	}
}
