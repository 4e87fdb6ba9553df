package agent

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
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
