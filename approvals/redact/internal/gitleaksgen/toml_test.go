package main

import (
	"strings"
	"testing"
)

const sample = `title = "gitleaks config"
[allowlist]
regexes = [
    '''^\$(?:\d+)$''',
]
stopwords = ["abcdefghijklmnopqrstuvwxyz"]

[[rules]]
id = "github-pat"
description = "GitHub token, with a ] and ''' inside"
regex = '''ghp_[0-9a-zA-Z]{36}'''
entropy = 3
keywords = ["ghp_"]
[[rules.allowlists]]
paths = ['''README\.md$''']

[[rules]]
id = "php-only"
regex = '''x'''
path = '''\.php$'''

[[rules]]
id = "sonar"
regex = '''(sonar)(x)'''
secretGroup = 2
keywords = [
    "sonar",
    "sq_",
]
[[rules.allowlists]]
regexTarget = "line"
regexes = ['''^#''']
`

func TestParseAndRender(t *testing.T) {
	cfg, err := parse(sample)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Rules) != 3 || cfg.Rules[0].Entropy != 3 || cfg.Rules[2].SecretGroup != 2 || len(cfg.Rules[2].Keywords) != 2 {
		t.Fatalf("parsed %+v", cfg.Rules)
	}
	code, err := render(cfg, "v0.0.0", "MIT License", nil)
	if err != nil {
		t.Fatal(err)
	}
	src := string(code)
	for _, want := range []string{`ID: "github-pat"`, "`ghp_[0-9a-zA-Z]{36}`", `SecretGroup: 2`, `Target: "line"`, "// MIT License"} {
		if !strings.Contains(src, want) {
			t.Errorf("output lacks %s:\n%s", want, src)
		}
	}
	if strings.Contains(src, "php-only") || strings.Contains(src, "README") {
		t.Errorf("path-only rule or allowlist kept:\n%s", src)
	}
}

func TestParseRejectsUnknownKeys(t *testing.T) {
	if _, err := parse("[[rules]]\nid = \"x\"\nfancy = 1\n"); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("err = %v; want an unknown-key error on line 3", err)
	}
}
