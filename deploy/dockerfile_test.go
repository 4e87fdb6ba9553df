package deploy_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	Cmd  string // upper case: RUN, COPY, ...
	Args string
	Line int
}

// stage is one FROM and what follows it.
type stage struct {
	From, Name string
	Ins        []instruction
}

// dockerfile is deploy/Dockerfile, parsed as far as the tests need: the
// stages, and the ARGs declared before the first FROM.
type dockerfile struct {
	GlobalArgs map[string]string
	Stages     []stage
}

// parseDockerfile reads a Dockerfile: comments dropped, lines ending in a
// backslash joined (comment lines inside them skipped, as Docker does).
func parseDockerfile(path string) (*dockerfile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	df := &dockerfile{GlobalArgs: map[string]string{}}
	var cur strings.Builder
	start := 0
	for i, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") || (trimmed == "" && cur.Len() == 0) {
			continue
		}
		if cur.Len() == 0 {
			start = i + 1
		}
		if strings.HasSuffix(trimmed, "\\") {
			cur.WriteString(strings.TrimSuffix(trimmed, "\\") + " ")
			continue
		}
		cur.WriteString(trimmed)
		if err := df.add(cur.String(), start); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, start, err)
		}
		cur.Reset()
	}
	if cur.Len() > 0 {
		return nil, fmt.Errorf("%s:%d: the file ends inside a continued line", path, start)
	}
	return df, nil
}

func (df *dockerfile) add(text string, line int) error {
	cmd, args, _ := strings.Cut(text, " ")
	in := instruction{Cmd: strings.ToUpper(cmd), Args: strings.TrimSpace(args), Line: line}
	switch {
	case in.Cmd == "FROM":
		f := strings.Fields(in.Args)
		s := stage{From: f[0]}
		if len(f) == 3 && strings.EqualFold(f[1], "AS") {
			s.Name = f[2]
		}
		df.Stages = append(df.Stages, s)
	case len(df.Stages) == 0 && in.Cmd == "ARG":
		name, def, _ := strings.Cut(in.Args, "=")
		df.GlobalArgs[name] = def
	case len(df.Stages) == 0:
		return fmt.Errorf("%s before the first FROM", in.Cmd)
	default:
		s := &df.Stages[len(df.Stages)-1]
		s.Ins = append(s.Ins, in)
	}
	return nil
}

// stage returns the stage named name ("" for the last, the image).
func (df *dockerfile) stage(t *testing.T, name string) stage {
	t.Helper()
	if name == "" {
		return df.Stages[len(df.Stages)-1]
	}
	for _, s := range df.Stages {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("Dockerfile has no stage %q", name)
	return stage{}
}

// all returns the stage's instructions of one kind.
func (s stage) all(cmd string) []instruction {
	var out []instruction
	for _, in := range s.Ins {
		if in.Cmd == cmd {
			out = append(out, in)
		}
	}
	return out
}

// one returns the stage's only instruction of a kind.
func (s stage) one(t *testing.T, cmd string) instruction {
	t.Helper()
	ins := s.all(cmd)
	if len(ins) != 1 {
		t.Fatalf("stage %q: want exactly one %s, found %d", s.Name, cmd, len(ins))
	}
	return ins[0]
}

// jsonArgs reads an exec-form (JSON array) argument list.
func jsonArgs(t *testing.T, in instruction) []string {
	t.Helper()
	var out []string
	if err := json.Unmarshal([]byte(in.Args), &out); err != nil {
		t.Fatalf("Dockerfile line %d: %s must be in JSON form [\"...\"] (no shell in between): %v", in.Line, in.Cmd, err)
	}
	return out
}

// goBuild is the build stage's `go build` command, expanded as the shell in
// the builder would: the environment assignments before it and its words.
type goBuild struct {
	Env  []string
	Args []string // "go", "build", ...
	Line int
}

// goBuildCommand finds the build stage's RUN that calls `go build` and
// expands it with the ARGs (defaults overridden by buildArgs).
func goBuildCommand(t *testing.T, df *dockerfile, buildArgs map[string]string) goBuild {
	t.Helper()
	s := df.stage(t, "build")
	vars := map[string]string{}
	for k, v := range df.GlobalArgs {
		vars[k] = v
	}
	var found []goBuild
	for _, in := range s.Ins {
		switch in.Cmd {
		case "ARG":
			name, def, _ := strings.Cut(in.Args, "=")
			vars[name] = def
		case "ENV":
			name, val, _ := strings.Cut(in.Args, "=")
			vars[name] = val
		case "RUN":
			if !strings.Contains(in.Args, "go build") {
				continue
			}
			for k, v := range buildArgs {
				vars[k] = v
			}
			found = append(found, expandRun(t, in, vars))
		}
	}
	if len(found) != 1 {
		t.Fatalf("the build stage must have exactly one RUN with `go build`, found %d", len(found))
	}
	return found[0]
}

// expandRun parses a RUN's shell command (after its --mount options) and
// expands its one simple command.
func expandRun(t *testing.T, in instruction, vars map[string]string) goBuild {
	t.Helper()
	shell := in.Args
	for strings.HasPrefix(shell, "--") {
		_, shell, _ = strings.Cut(shell, " ")
		shell = strings.TrimSpace(shell)
	}
	file, err := syntax.NewParser().Parse(strings.NewReader(shell), "Dockerfile")
	if err != nil {
		t.Fatalf("Dockerfile line %d: RUN is not valid shell: %v", in.Line, err)
	}
	if len(file.Stmts) != 1 {
		t.Fatalf("Dockerfile line %d: the go build RUN must be one simple command, so the test can run exactly it", in.Line)
	}
	call, ok := file.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok {
		t.Fatalf("Dockerfile line %d: the go build RUN must be one simple command, not %T", in.Line, file.Stmts[0].Cmd)
	}
	var env []string
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	cfg := &expand.Config{Env: expand.ListEnviron(env...), NoUnset: true}
	gb := goBuild{Line: in.Line}
	for _, a := range call.Assigns {
		v, err := expand.Literal(cfg, a.Value)
		if err != nil {
			t.Fatalf("Dockerfile line %d: %s=: %v", in.Line, a.Name.Value, err)
		}
		gb.Env = append(gb.Env, a.Name.Value+"="+v)
	}
	if gb.Args, err = expand.Fields(cfg, call.Args...); err != nil {
		t.Fatalf("Dockerfile line %d: %v", in.Line, err)
	}
	return gb
}

// output returns the value of the build's -o flag.
func (gb goBuild) output(t *testing.T) string {
	t.Helper()
	for i, a := range gb.Args {
		if a == "-o" && i+1 < len(gb.Args) {
			return gb.Args[i+1]
		}
	}
	t.Fatalf("Dockerfile line %d: go build has no -o OUTPUT", gb.Line)
	return ""
}

// withOutput is the same build writing to out instead.
func (gb goBuild) withOutput(out string) goBuild {
	args := append([]string(nil), gb.Args...)
	for i, a := range args {
		if a == "-o" && i+1 < len(args) {
			args[i+1] = out
		}
	}
	gb.Args = args
	return gb
}

// copies maps each destination of the stage's COPY instructions from the
// build context to its source, relative to the repository root.
func (s stage) copies(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, in := range s.all("COPY") {
		f := strings.Fields(in.Args)
		if strings.HasPrefix(f[0], "--from=") || len(f) != 2 {
			continue
		}
		out[f[1]] = filepath.FromSlash(f[0])
	}
	return out
}

// copyFrom returns the source of the COPY --from=stage that writes dest.
func (s stage) copyFrom(t *testing.T, from, dest string) string {
	t.Helper()
	for _, in := range s.all("COPY") {
		f := strings.Fields(in.Args)
		if len(f) == 3 && f[0] == "--from="+from && f[2] == dest {
			return f[1]
		}
	}
	t.Fatalf("the image has no COPY --from=%s ... %s", from, dest)
	return ""
}
