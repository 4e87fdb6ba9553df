package main

import (
	"strings"
	"testing"

	"github.com/opsbot/opsbot/agent"
)

// agent.budget is read as token counts; config check refuses a negative
// one and a misspelt key by name and line.
func TestConfigChecksTheTokenBudgets(t *testing.T) {
	t.Parallel()
	cfg, err := parseConfig("c.yaml", []byte("agent:\n  budget:\n    turn: 500000\n    thread_day: 2000000\n    alert: 300000\n"), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if want := (agent.TokenBudget{Turn: 500000, ThreadDay: 2000000, Alert: 300000}); cfg.Agent.Budget != want {
		t.Errorf("budget = %+v; want %+v", cfg.Agent.Budget, want)
	}
	for yaml, want := range map[string][]string{
		"agent:\n  budget:\n    turn: -1\n":       {"agent.budget.turn", "number of tokens"},
		"agent:\n  budget:\n    thread_dya: 5\n":  {"c.yaml:3:", "agent.budget.thread_dya", `did you mean "thread_day"`},
		"agent:\n  budget:\n    alert: lots\n":    {"c.yaml:3:", "agent.budget.alert", "whole number"},
		"agent:\n  budget:\n    thread_day: -5\n": {"agent.budget.thread_day"},
	} {
		_, err := parseConfig("c.yaml", []byte(yaml), env(nil))
		for _, w := range want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error %v does not contain %q", yaml, err, w)
			}
		}
	}
}
