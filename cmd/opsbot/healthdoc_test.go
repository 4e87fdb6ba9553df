package main

import (
	"os"
	"reflect"
	"regexp"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/opsbot/opsbot/checks"
)

// docs/health-checks.md configures the example config's checks and
// schedules, word for word: the page explains what a newcomer finds there.
func TestHealthChecksDocShowsTheExampleConfig(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/health-checks.md")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindSubmatch(doc)
	if block == nil {
		t.Fatal("docs/health-checks.md has no YAML example")
	}
	example, err := os.ReadFile("../../deploy/opsbot.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var shown, want checks.Config
	if err := yaml.Unmarshal(block[1], &shown); err != nil {
		t.Fatalf("the page's YAML: %v", err)
	}
	if err := yaml.Unmarshal(example, &want); err != nil {
		t.Fatalf("the example config: %v", err)
	}
	if len(want.Checks) == 0 || len(want.Schedules) == 0 {
		t.Fatal("the example config has no checks or schedules to show")
	}
	if !reflect.DeepEqual(shown, want) {
		t.Errorf("docs/health-checks.md shows\n%+v\nthe example config has\n%+v", shown, want)
	}
}
