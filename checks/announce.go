package checks

import (
	"fmt"
	"strings"
)

// announceItems is how many checks one line of an announcement names;
// the rest are counted ("and 3 more").
const announceItems = 5

// Announcement says, in a line or two a person can act on, what needs
// someone since the previous run: the checks that began failing and the
// hosts that became unreachable, then those that recovered (no longer
// failing or unreachable). It is "" when neither happened: a run that is
// still failing, or whose only change is a warning, announces nothing.
// A schedule's first run announces what fails in it.
func (rep Report) Announcement(maxText int) string {
	failed, recovered := rep.turned()
	head := "**Health · " + rep.Schedule + "**"
	var lines []string
	if len(failed) > 0 {
		lines = append(lines, announceLine(symFail+" "+head+": "+plural(len(failed), "new failure"), failed))
	}
	if len(recovered) > 0 {
		lines = append(lines, announceLine(fmt.Sprintf("%s %s: %d recovered", symOK, head, len(recovered)), recovered))
	}
	for i := range lines {
		lines[i] = cut(lines[i], max(1, maxText/len(lines)-1))
	}
	return strings.Join(lines, "\n")
}

// announceLine is a line's head and its first items.
func announceLine(head string, items []string) string {
	shown := items[:min(len(items), announceItems)]
	line := head + " — " + strings.Join(shown, "; ")
	if more := len(items) - len(shown); more > 0 {
		line += fmt.Sprintf("; and %d more in the thread", more)
	}
	return line
}

// turned are the results that began failing (a host that became
// unreachable once, not per check) and those that stopped, in the
// report's order, each as "check on host: why".
func (rep Report) turned() (failed, recovered []string) {
	seenDown, seenUp := map[string]bool{}, map[string]bool{}
	for _, r := range rep.Results {
		wasBad := r.Prev != nil && r.Prev.Status.bad()
		switch {
		case r.Status == StatusUnreachable && !wasBad:
			if !seenDown[r.Host] {
				seenDown[r.Host] = true
				failed = append(failed, withDetail(r.Host+" unreachable", r.Detail))
			}
		case r.Status.bad() && !wasBad:
			failed = append(failed, withDetail(r.Check+" on "+r.Host, r.Detail))
		case !r.Status.bad() && wasBad && r.Prev.Status == StatusUnreachable:
			if !seenUp[r.Host] {
				seenUp[r.Host] = true
				recovered = append(recovered, r.Host+" reachable again")
			}
		case !r.Status.bad() && wasBad:
			recovered = append(recovered, r.Check+" on "+r.Host+statusNow(r.Status))
		}
	}
	return failed, recovered
}

// statusNow notes a recovery that is not yet ok.
func statusNow(s Status) string {
	if s == StatusWarn {
		return " (now a warning)"
	}
	return ""
}

func withDetail(what, detail string) string {
	if detail == "" {
		return what
	}
	return what + ": " + detail
}
