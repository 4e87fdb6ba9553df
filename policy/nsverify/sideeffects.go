package nsverify

import (
	"fmt"
	"slices"
	"strings"
)

// sideEffects are directories that everyday read-only programs create on
// every run and that nothing relies on. The harness found each one; a
// report lists them apart (Report.SideEffects) and Harmless ignores them,
// but only as new, empty directories at exactly these paths.
var sideEffects = map[string]string{
	"root/.config":        "top (procps-ng 4) creates ~/.config/procps, looking for its rc file",
	"root/.config/procps": "top (procps-ng 4) creates ~/.config/procps, looking for its rc file",
	"tmp/hsperfdata_root": "every JVM, java -version too, creates its perf-data directory in /tmp",
}

// splitSideEffects moves the changes that are known side effects, and the
// new names they add to their parent directories, out of r.Changes.
func (r *Report) splitSideEffects() {
	benign := map[string]bool{}
	for _, c := range r.Changes {
		if isNewSideEffect(c) {
			benign[c.Path] = true
		}
	}
	var keep []Change
	for _, c := range r.Changes {
		if benign[c.Path] || onlyAdds(c, benign) {
			r.SideEffects = append(r.SideEffects, c)
			continue
		}
		keep = append(keep, c)
	}
	r.Changes = keep
}

// isNewSideEffect: c created one of sideEffects as a directory holding
// nothing but other side effects.
func isNewSideEffect(c Change) bool {
	if sideEffects[c.Path] == "" || c.Before != "absent" {
		return false
	}
	head, names, ok := dirState(c.After)
	if !ok || !strings.HasPrefix(head, "directory ") {
		return false
	}
	for _, n := range names {
		if sideEffects[c.Path+"/"+n] == "" {
			return false
		}
	}
	return true
}

// onlyAdds: c is a directory whose type, mode and owner did not change and
// whose only new names are benign children; nothing was removed.
func onlyAdds(c Change, benign map[string]bool) bool {
	h1, before, ok1 := dirState(c.Before)
	h2, after, ok2 := dirState(c.After)
	if !ok1 || !ok2 || h1 != h2 {
		return false
	}
	for _, n := range before {
		if !slices.Contains(after, n) {
			return false
		}
	}
	for _, n := range after {
		if !slices.Contains(before, n) && !benign[join(c.Path, n)] {
			return false
		}
	}
	return true
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// dirState splits a directory's state from ns.sh into its head (type,
// mode, owner) and its names.
func dirState(s string) (head string, names []string, ok bool) {
	head, list, ok := strings.Cut(s, " names:")
	if !ok {
		return "", nil, false
	}
	for n := range strings.SplitSeq(list, "/") {
		if n != "" {
			names = append(names, n)
		}
	}
	return head, names, true
}

// String describes the change; for a directory whose entries changed, the
// names added and removed rather than both lists.
func (c Change) String() string {
	h1, before, ok1 := dirState(c.Before)
	h2, after, ok2 := dirState(c.After)
	if !ok1 || !ok2 || h1 != h2 {
		return fmt.Sprintf("/%s: %s → %s", c.Path, short(c.Before), short(c.After))
	}
	var added, removed []string
	for _, n := range after {
		if !slices.Contains(before, n) {
			added = append(added, n)
		}
	}
	for _, n := range before {
		if !slices.Contains(after, n) {
			removed = append(removed, n)
		}
	}
	return fmt.Sprintf("/%s: %s, entries added %q, removed %q", c.Path, h1, added, removed)
}

// short keeps a long directory listing readable in a report.
func short(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
