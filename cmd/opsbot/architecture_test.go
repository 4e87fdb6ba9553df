package main

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

var updateMap = flag.Bool("update", false, "rewrite docs/ARCHITECTURE.md's generated import graph from go list")

// architectureDoc is the map a newcomer reads; its import graph is
// generated between these markers.
const (
	architectureDoc = "../../docs/ARCHITECTURE.md"
	graphBegin      = "<!-- BEGIN import graph: generated from go list by go test ./cmd/opsbot -run ArchitectureMap -update; do not edit -->"
	graphEnd        = "<!-- END import graph -->"
)

// TestArchitectureMapMatchesGoList: the import graph in
// docs/ARCHITECTURE.md is the one go list reports, floor by floor and
// package by package (the rules it obeys are TestImportsFollowTheDesign's).
// -update rewrites it.
func TestArchitectureMapMatchesGoList(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(architectureDoc)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok1 := strings.Cut(string(doc), graphBegin+"\n")
	shown, after, ok2 := strings.Cut(rest, graphEnd)
	if !ok1 || !ok2 {
		t.Fatalf("%s lacks the markers %q and %q around its import graph", architectureDoc, graphBegin, graphEnd)
	}
	want := graphBlock(importGraph(t))
	if *updateMap {
		if err := os.WriteFile(architectureDoc, []byte(before+graphBegin+"\n"+want+graphEnd+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if shown != want {
		t.Errorf("the import graph in %s is not go list's (go test ./cmd/opsbot -run ArchitectureMap -update rewrites it); go list says:\n%s", architectureDoc, want)
	}
}

// pkgInfo is a package of the module: its name and the module's packages
// it imports (its tests' imports left out).
type pkgInfo struct {
	name    string
	imports []string
}

// importGraph is go list's view of the module, by path relative to it.
func importGraph(t *testing.T) map[string]pkgInfo {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{.Name}} {{join .Imports " "}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	g := map[string]pkgInfo{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		p := pkgInfo{name: f[1]}
		for _, imp := range f[2:] {
			if rel, ok := strings.CutPrefix(imp, module+"/"); ok {
				p.imports = append(p.imports, rel)
			}
		}
		g[strings.TrimPrefix(strings.TrimPrefix(f[0], module), "/")] = p
	}
	return g
}

// floors puts each package one floor above the highest it imports: floor
// 0 imports none of ours.
func floors(g map[string]pkgInfo) map[string]int {
	fl := map[string]int{}
	var floor func(p string) int
	floor = func(p string) int {
		if f, ok := fl[p]; ok {
			return f
		}
		f := 0
		for _, imp := range g[p].imports {
			f = max(f, floor(imp)+1)
		}
		fl[p] = f
		return f
	}
	for p := range g {
		floor(p)
	}
	return fl
}

// graphBlock is the graph as Markdown: a table of floors, highest first,
// then each package's imports of ours.
func graphBlock(g map[string]pkgInfo) string {
	fl := floors(g)
	byFloor := map[int][]string{}
	top := 0
	for p, f := range fl {
		byFloor[f] = append(byFloor[f], p)
		top = max(top, f)
	}
	var b strings.Builder
	b.WriteString("| floor | packages (a command in *italics*) |\n|---|---|\n")
	for f := top; f >= 0; f-- {
		names := byFloor[f]
		slices.Sort(names)
		for i, p := range names {
			names[i] = "`" + p + "`"
			if g[p].name == "main" {
				names[i] = "*" + names[i] + "*"
			}
		}
		fmt.Fprintf(&b, "| %d | %s |\n", f, strings.Join(names, ", "))
	}
	b.WriteString("\nEach package and the packages of ours it imports:\n\n")
	for _, p := range slices.Sorted(maps.Keys(g)) {
		imps := slices.Clone(g[p].imports)
		slices.Sort(imps)
		line := "—"
		if len(imps) > 0 {
			line = "`" + strings.Join(imps, "`, `") + "`"
		}
		fmt.Fprintf(&b, "- `%s` → %s\n", p, line)
	}
	return b.String()
}
