package tools

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/hosts"
)

//go:embed run_skill_script.md
var runSkillScriptDescription string

// RunSkillScript is `run_skill_script`: a script from a skill's folder,
// on the local host, through the same guard as every command.
type RunSkillScript struct {
	Skills  []agent.Skill
	Guard   *approvals.Guard
	Timeout time.Duration // default 60s
}

var _ agent.Tool = (*RunSkillScript)(nil)

type skillScriptInput struct {
	Skill  string   `json:"skill"`
	Script string   `json:"script"`
	Args   []string `json:"args"`
	Stdin  string   `json:"stdin"`
}

// Spec describes the tool.
func (*RunSkillScript) Spec() agent.ToolSpec {
	return spec("run_skill_script", runSkillScriptDescription,
		`{"type":"object","properties":{"skill":{"type":"string"},"script":{"type":"string","description":"path relative to the skill folder"},"args":{"type":"array","items":{"type":"string"}},"stdin":{"type":"string"}},"required":["skill","script"]}`)
}

// Call confines, authorizes and runs the script.
func (t *RunSkillScript) Call(ctx context.Context, call agent.ToolCall) agent.ToolResult {
	var in skillScriptInput
	if err := decodeInput(call, &in); err != nil {
		return agent.Errorf("%v", err)
	}
	s, ok := findSkill(t.Skills, in.Skill)
	if !ok {
		return agent.Errorf("no skill %q", in.Skill)
	}
	path, err := confine(s.Dir, in.Script)
	if err != nil {
		return agent.Errorf("%v", err)
	}
	command := shellQuote(append([]string{path}, in.Args...))
	// What is approved is what runs: the stdin is part of it, shown as a
	// here-string (the script reads exactly in.Stdin, no newline added).
	approved := command
	if in.Stdin != "" {
		approved += " <<< " + shellQuote([]string{in.Stdin})
	}
	permit, err := Authorize(ctx, t.Guard, call, "local", approved, s.Dir)
	if err != nil {
		return refusal(err)
	}
	r := t.Guard.Exec.Exec(ctx, permit.Hosts, command, hosts.ExecOptions{Confinement: permit.Confinement, Timeout: orDefault(t.Timeout, time.Minute), Stdin: in.Stdin, Dir: s.Dir})[0]
	if r.Err != nil {
		return agent.Errorf("could not run %s: %v", in.Script, r.Err)
	}
	content := fmt.Sprintf("exit_code: %d\nduration: %s\nkilled: %t\n--- stdout ---\n%s\n--- stderr ---\n%s",
		r.ExitCode, r.Duration.Round(time.Millisecond), r.Killed, r.Stdout, r.Stderr)
	return agent.ToolResult{Content: content, IsError: r.ExitCode != 0 || r.Killed, Summary: r.Status()}
}

// confine resolves script inside dir, following symlinks, and refuses
// anything that ends up outside it or is not a regular file.
func confine(dir, script string) (string, error) {
	if script == "" || filepath.IsAbs(script) {
		return "", fmt.Errorf("script must be a path relative to the skill folder, got %q", script)
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	full, err := filepath.EvalSymlinks(filepath.Join(root, script))
	if err != nil {
		return "", fmt.Errorf("no script %q in the skill folder", script)
	}
	rel, err := filepath.Rel(root, full)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("script %q escapes the skill folder: refused", script)
	}
	if st, err := os.Stat(full); err != nil || !st.Mode().IsRegular() {
		return "", fmt.Errorf("script %q is not a regular file", script)
	}
	return full, nil
}

// shellQuote joins words into one shell command line, each quoted.
func shellQuote(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		q, err := syntax.Quote(w, syntax.LangBash)
		if err != nil { // a NUL byte: cannot be an argument at all
			q = "''"
		}
		out[i] = q
	}
	return strings.Join(out, " ")
}
