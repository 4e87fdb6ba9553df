package deploy_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// makeVar returns the value of a `NAME := value` (or ?=, =) line of the
// Makefile.
func makeVar(t *testing.T, mk []byte, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^(?:export\s+)?` + name + `\s*[:?]?=\s*(.*)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatalf("the Makefile sets no %s", name)
	}
	return strings.TrimSpace(string(m[1]))
}

// compileFlags are the flags of a go build that change what is compiled:
// all but -o and -ldflags (which only change the link), -v and the
// package, which comes last.
func compileFlags(args []string) []string {
	var out []string
	for i := 0; i < len(args)-1; i++ {
		switch a := args[i]; a {
		case "-o", "-ldflags":
			i++
		case "-v":
		default:
			out = append(out, a)
		}
	}
	return out
}

// TestMakeBuildCompilesAsTheImage: `make build` (and so `make run`) compiles
// with deploy/Dockerfile's flags and cgo, so bin/opsbot and the image's
// binary share every compiled package in the build cache and a cold
// `make test-deploy` compiles opsbot once, not twice.
func TestMakeBuildCompilesAsTheImage(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join(repo, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if cgo := makeVar(t, mk, "CGO_ENABLED"); cgo != "1" {
		t.Errorf("the Makefile exports CGO_ENABLED=%s; the image builds with 1", cgo)
	}
	recipe := regexp.MustCompile(`(?m)^build:\n(?:\t.*\n)*`).Find(mk)
	if !strings.Contains(string(recipe), "$(GO) build -v $(BUILD_FLAGS) ") {
		t.Fatalf("make build does not compile with $(BUILD_FLAGS) (and -v, for progress):\n%s", recipe)
	}
	gb := goBuildCommand(t, readDockerfile(t), nil)
	if !strings.Contains(" "+strings.Join(gb.Env, " ")+" ", " CGO_ENABLED=1 ") {
		t.Errorf("Dockerfile line %d: the go build sets no CGO_ENABLED=1: %v", gb.Line, gb.Env)
	}
	image := compileFlags(gb.Args[2:])
	ours := strings.Fields(makeVar(t, mk, "BUILD_FLAGS"))
	if strings.Join(image, " ") != strings.Join(ours, " ") {
		t.Errorf("the image compiles with %q, make build with BUILD_FLAGS %q: they would not share the build cache", image, ours)
	}
}
