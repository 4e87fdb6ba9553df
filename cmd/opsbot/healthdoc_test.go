package main

import (
	"bytes"
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

// The page's schedule that pages a Slack user group and a Discord role is
// one `config check` accepts, with the example config's checks, and the
// mentions it shows are the ones opsbot sends.
func TestHealthChecksDocNotifyExampleIsValid(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/health-checks.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(doc, -1)
	var shown checks.Config
	for _, b := range blocks[1:] {
		if bytes.Contains(b[1], []byte("notify:")) {
			if err := yaml.Unmarshal(b[1], &shown); err != nil {
				t.Fatalf("the page's notify example: %v", err)
			}
		}
	}
	if len(shown.Schedules) != 1 || len(shown.Schedules[0].Notify) != 2 {
		t.Fatalf("docs/health-checks.md has no schedule with two notify mentions: %+v", shown.Schedules)
	}
	example, err := os.ReadFile("../../deploy/opsbot.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var want checks.Config
	if err := yaml.Unmarshal(example, &want); err != nil {
		t.Fatal(err)
	}
	shown.Checks = want.Checks
	if err := shown.Validate(); err != nil {
		t.Errorf("the page's notify example is refused: %v", err)
	}
}
