package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/agent/anthropic"
	"github.com/opsbot/opsbot/agent/openai"
)

// GET /api/models names the model the agent asks for (agent.model), not
// the provider's label.
func TestAPIModelsListsTheConfiguredModel(t *testing.T) {
	t.Parallel()
	base := startBrowserBot(t, &fakeLLM{t: t}) // agent.model: fake-model
	resp, err := http.Get(base + "/api/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct{ Models []string }
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.Models, ",") != "fake-model" {
		t.Errorf("GET /api/models lists %q, want [fake-model]", got.Models)
	}
}

// Without agent.model or OPSBOT_MODEL the model is the provider's default.
func TestModelNameFallsBackAsTheProvidersDo(t *testing.T) {
	t.Setenv("OPSBOT_MODEL", "")
	tests := []struct{ label, model, want string }{
		{"anthropic", "", string(anthropic.DefaultModel)},
		{"openai-compatible", "", string(openai.DefaultModel)},
		{"openai-compatible", "llama3.1:8b", "llama3.1:8b"},
	}
	for _, tt := range tests {
		if got := modelName(tt.label, tt.model); got != tt.want {
			t.Errorf("modelName(%q, %q) = %q, want %q", tt.label, tt.model, got, tt.want)
		}
	}
	t.Setenv("OPSBOT_MODEL", "deepseek-chat")
	if got := modelName("openai-compatible", ""); got != "deepseek-chat" {
		t.Errorf("with OPSBOT_MODEL=deepseek-chat: %q", got)
	}
}
