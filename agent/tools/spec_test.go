package tools

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/opsbot/opsbot/agent"
)

// The model reads every tool's name, description and schema, in this
// order, at the start of every request: they are the cached prefix of
// the prompt. testdata/specs.golden.json holds them as the loop sent them
// before the tools left package agent; a change to one is a change to what
// the model reads, and must be made there on purpose.
func TestSpecsAreWhatTheModelReads(t *testing.T) {
	t.Parallel()
	var want []struct{ Name, Description, InputSchema string }
	data, err := os.ReadFile("testdata/specs.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	r := agent.NewRegistry(&RunCommand{}, &StartJob{}, &JobStatus{}, &CancelJob{}, &TailFile{}, &PolicyCheck{}, NewTodo(),
		agent.NewCompactTool(), &Task{Parent: &agent.Agent{}}, &HealthResults{}, &LoadSkill{}, &RunSkillScript{},
		&ReadFile{}, &Grep{}, &Journal{}, &HTTPGet{}, &PrometheusQuery{}, &LokiQuery{})
	got := r.Specs()
	if len(got) != len(want) {
		t.Fatalf("%d tools, want %d", len(got), len(want))
	}
	for i, s := range got {
		w := want[i]
		if s.Name != w.Name || s.Description != w.Description || string(s.InputSchema) != w.InputSchema {
			t.Errorf("tool %d is\n%s: %q\n%s\nwant\n%s: %q\n%s", i, s.Name, s.Description, s.InputSchema, w.Name, w.Description, w.InputSchema)
		}
	}
}
