package agent

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
	"mvdan.cc/sh/v3/syntax"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/hosts"
)

// Skill is a folder holding SKILL.md: a name and description the system
// prompt lists, and a body loaded only when the model asks for it.
type Skill struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Dir         string `yaml:"-"`
	Body        string `yaml:"-"`
}

// LoadSkills reads every <dir>/*/SKILL.md. A malformed skill is an error
// naming its file: a skill silently missing would be worse.
func LoadSkills(dirs []string) ([]Skill, error) {
	var skills []Skill
	seen := map[string]string{}
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*", "SKILL.md"))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			s, err := readSkill(f)
			if err != nil {
				return nil, err
			}
			if prev, dup := seen[s.Name]; dup {
				return nil, fmt.Errorf("agent: skill %q is defined twice: %s and %s", s.Name, prev, f)
			}
			seen[s.Name] = f
			skills = append(skills, s)
		}
	}
	sort.Slice(skills, func(i, j int) bool { return skills[i].Name < skills[j].Name })
	return skills, nil
}

func readSkill(path string) (Skill, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Skill{}, fmt.Errorf("agent: skill: %w", err)
	}
	rest, ok := bytes.CutPrefix(data, []byte("---\n"))
	front, body, ok2 := bytes.Cut(rest, []byte("\n---"))
	if !ok || !ok2 {
		return Skill{}, fmt.Errorf("agent: skill %s: must start with YAML front matter between --- lines (name, description)", path)
	}
	var s Skill
	dec := yaml.NewDecoder(bytes.NewReader(front))
	dec.KnownFields(false)
	if err := dec.Decode(&s); err != nil {
		return Skill{}, fmt.Errorf("agent: skill %s: front matter: %w", path, err)
	}
	if s.Name == "" || s.Description == "" {
		return Skill{}, fmt.Errorf("agent: skill %s: front matter needs name and description", path)
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return Skill{}, err
	}
	s.Dir, s.Body = dir, strings.TrimLeft(string(body), "-\n")
	return s, nil
}

// SkillIndex is the system prompt's list of skills: names and descriptions.
func SkillIndex(skills []Skill) string {
	var b strings.Builder
	for _, s := range skills {
		fmt.Fprintf(&b, "- %s: %s\n", s.Name, s.Description)
	}
	return b.String()
}

func findSkill(skills []Skill, name string) (Skill, bool) {
	for _, s := range skills {
		if s.Name == name {
			return s, true
		}
	}
	return Skill{}, false
}

// LoadSkillTool is `load_skill`.
type LoadSkillTool struct{ Skills []Skill }

// Spec describes the tool.
func (*LoadSkillTool) Spec() ToolSpec {
	return ToolSpec{Name: "load_skill", Description: "Load the full instructions of a skill listed in the system prompt.",
		InputSchema: schema(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)}
}

// Call returns the skill's body.
func (t *LoadSkillTool) Call(_ context.Context, call ToolCall) ToolResult {
	var in struct {
		Name string `json:"name"`
	}
	if err := decodeInput(call, &in); err != nil {
		return Errorf("%v", err)
	}
	s, ok := findSkill(t.Skills, in.Name)
	if !ok {
		return Errorf("no skill %q; the skills are listed in the system prompt", in.Name)
	}
	return ToolResult{Content: fmt.Sprintf("<skill name=%q dir=%q>\n%s\n</skill>", s.Name, s.Dir, s.Body), Summary: "loaded skill " + s.Name}
}

// RunSkillScriptTool is `run_skill_script`: a script from a skill's folder,
// on the local host, through the same guard as every command.
type RunSkillScriptTool struct {
	Skills  []Skill
	Guard   *approvals.Guard
	Timeout time.Duration // default 60s
}

type skillScriptInput struct {
	Skill  string   `json:"skill"`
	Script string   `json:"script"`
	Args   []string `json:"args"`
	Stdin  string   `json:"stdin"`
}

// Spec describes the tool.
func (*RunSkillScriptTool) Spec() ToolSpec {
	return ToolSpec{Name: "run_skill_script", Description: "Run a script that lives in a skill's folder, on the bot's own host, with arguments and stdin. Returns exit code, stdout, stderr, duration and whether it was killed.",
		InputSchema: schema(`{"type":"object","properties":{"skill":{"type":"string"},"script":{"type":"string","description":"path relative to the skill folder"},"args":{"type":"array","items":{"type":"string"}},"stdin":{"type":"string"}},"required":["skill","script"]}`)}
}

// Call confines, authorizes and runs the script.
func (t *RunSkillScriptTool) Call(ctx context.Context, call ToolCall) ToolResult {
	var in skillScriptInput
	if err := decodeInput(call, &in); err != nil {
		return Errorf("%v", err)
	}
	s, ok := findSkill(t.Skills, in.Skill)
	if !ok {
		return Errorf("no skill %q", in.Skill)
	}
	path, err := confine(s.Dir, in.Script)
	if err != nil {
		return Errorf("%v", err)
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
		return Errorf("could not run %s: %v", in.Script, r.Err)
	}
	content := fmt.Sprintf("exit_code: %d\nduration: %s\nkilled: %t\n--- stdout ---\n%s\n--- stderr ---\n%s",
		r.ExitCode, r.Duration.Round(time.Millisecond), r.Killed, r.Stdout, r.Stderr)
	return ToolResult{Content: content, IsError: r.ExitCode != 0 || r.Killed, Summary: r.Status()}
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
