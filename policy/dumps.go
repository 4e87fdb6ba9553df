package policy

import (
	"fmt"
	"slices"
	"strings"
)

// dumpCheck adds to c when a read-only verb prints an environment (a
// service's, a container's, the service manager's), where credentials
// live: the allowlist checks judge what a verb changes, this what it
// shows.
func (w *walker) dumpCheck(c *Command, args []arg) {
	check, ok := envDumps[c.Program]
	if !ok {
		return
	}
	if why := check(args); why != "" {
		c.add(Approve, why)
	}
}

// envDumps find the environment dumps of a program's read-only verbs.
var envDumps = map[string]func([]arg) string{
	"systemctl": systemctlDump, "docker": dockerDump, "podman": podmanDump, "ps": psFormatDump,
}

// psFormatDump: a format naming the environment (-o environ) prints
// every process's; checkPs judges the BSD "e" modifier.
func psFormatDump(args []arg) string {
	for _, a := range args {
		if v := strings.ToLower(a.val); strings.Contains(v, "env") {
			return fmt.Sprintf("ps %s may print every process's environment, which holds credentials", a.show())
		}
	}
	return ""
}

// systemctlDump: show prints every property, Environment= among them
// (of a unit, or the manager's own environment without one), unless -p
// names only others; cat prints the unit files, Environment= lines
// included; show-environment is the manager's environment.
func systemctlDump(args []arg) string {
	p := systemctlSpec.parse(args)
	if len(p.operands) == 0 || !p.operands[0].static() {
		return ""
	}
	switch verb := p.operands[0].val; verb {
	case "cat", "show-environment":
		return "systemctl " + verb + " prints Environment= settings, which hold credentials"
	case "show":
		props := p.findAll("p", "P", "property")
		if len(props) == 0 {
			return "systemctl show prints every property, Environment= (credentials) among them: name the ones wanted with -p"
		}
		for _, o := range props {
			for name := range strings.SplitSeq(o.value, ",") {
				if name == "" || strings.Contains(strings.ToLower(name), "environment") || strings.ContainsAny(name, "*?[") {
					return fmt.Sprintf("systemctl show %s prints Environment= settings, which hold credentials", o)
				}
			}
		}
	}
	return ""
}

// dockerDump: docker top passes the words after the container to ps on
// the host, where "e" prints every process's environment; docker history
// prints the commands that built an image, ENV values included.
func dockerDump(args []arg) string {
	g := dockerGlobal.parse(args)
	words := g.rest
	if len(words) > 0 && words[0].val == "container" || len(words) > 0 && words[0].val == "image" {
		words = words[1:]
	}
	if len(words) == 0 {
		return ""
	}
	switch words[0].val {
	case "top":
		top := (optSpec{family: pflag, long: []string{"help"}, stopAtOperand: true}).parse(words[1:])
		if len(top.rest) > 1 {
			if a, why := checkPs(top.rest[1:]); a != Allow {
				return "docker top: " + why
			}
			if why := psFormatDump(top.rest[1:]); why != "" {
				return "docker top: " + why
			}
		}
	case "history":
		return "docker history prints the commands that built the image, ENV values (credentials) included"
	}
	return ""
}

// podmanTopFields are podman top's format descriptors; any other word
// after the container is an option of ps, which podman runs inside the
// container, a program of the image's.
var podmanTopFields = []string{"args", "capamb", "capbnd", "capeff", "capinh", "capprm", "comm", "etime", "group", "hgroup", "hgroups",
	"hpid", "huser", "label", "nice", "pcpu", "pid", "ppid", "rgroup", "ruser", "seccomp", "state", "stime", "time", "tty", "user", "vsz"}

// podmanDump: docker's dumps, and podman top's ps options.
func podmanDump(args []arg) string {
	g := dockerGlobal.parse(args)
	words := g.rest
	if len(words) > 0 && words[0].val == "container" {
		words = words[1:]
	}
	if len(words) > 2 && words[0].val == "top" {
		for _, a := range words[2:] {
			if !a.static() || !slices.Contains(podmanTopFields, strings.TrimPrefix(a.val, "%")) {
				return fmt.Sprintf("podman top %s runs ps inside the container, a program of the image's", a.show())
			}
		}
		return ""
	}
	return dockerDump(args)
}
