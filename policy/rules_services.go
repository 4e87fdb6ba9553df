package policy

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// checkJournalctl refuses what deletes, rotates or writes journal data.
func checkJournalctl(args []arg) (Action, string) {
	p := journalctlSpec.parse(journalctlAttach(args))
	return refuseOpts(p, "deletes, rotates or writes journal data",
		"vacuum-size", "vacuum-time", "vacuum-files", "rotate", "flush", "sync", "relinquish-var", "smart-relinquish-var",
		"setup-keys", "update-catalog", "cursor-file", "image", "image-policy")
}

// journalctlAttach joins -b/--boot and -n/--lines with a separate value:
// journalctl takes the next word as their optional value when it reads
// as one (a boot offset or ID, a line count, "all"), not only an attached
// one as getopt would.
func journalctlAttach(args []arg) []arg {
	out := make([]arg, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if i+1 < len(args) && a.static() && args[i+1].static() && slices.Contains([]string{"-b", "--boot", "-n", "--lines"}, a.val) && journalValue.MatchString(args[i+1].val) {
			sep := ""
			if strings.HasPrefix(a.val, "--") {
				sep = "="
			}
			a = arg{src: a.src + " " + args[i+1].src, val: a.val + sep + args[i+1].val}
			i++
		}
		out = append(out, a)
	}
	return out
}

// journalValue is a boot offset or ID, or a line count.
var journalValue = regexp.MustCompile(`^([+-]?[0-9]+|[0-9a-f]{32}([+-][0-9]+)?|all)$`)

// systemctlReads are the systemctl verbs that only show state.
var systemctlReads = []string{"status", "show", "cat", "list-units", "list-unit-files", "list-timers", "list-sockets",
	"list-dependencies", "list-jobs", "list-machines", "list-automounts", "list-paths", "is-active", "is-enabled",
	"is-failed", "is-system-running", "get-default", "help"}

// checkSystemctl allows the verbs that show state; start, stop, restart,
// enable, disable and every other verb change it.
func checkSystemctl(args []arg) (Action, string) {
	p := systemctlSpec.parse(args)
	if p.unknown != "" {
		return Approve, p.unknown
	}
	if len(p.operands) == 0 {
		return Allow, "lists units"
	}
	verb := p.operands[0]
	if verb.static() && slices.Contains(systemctlReads, verb.val) {
		return Allow, verb.val + " only shows state"
	}
	return Approve, fmt.Sprintf("systemctl %s changes state", verb.show())
}

// checkService allows `service NAME status` and `service --status-all`.
func checkService(args []arg) (Action, string) {
	if len(args) == 1 && args[0].static() && args[0].val == "--status-all" {
		return Allow, ""
	}
	if len(args) == 2 && args[1].static() && args[1].val == "status" && args[0].static() {
		// service runs /etc/init.d/NAME: a name with a slash, or . or .., is
		// a path to any program (service ../../usr/sbin/useradd status).
		if !serviceName.MatchString(args[0].val) {
			return Approve, fmt.Sprintf("%q is not a service name (service runs /etc/init.d/NAME)", args[0].val)
		}
		return Allow, "status only shows state"
	}
	return Approve, "service with a verb other than status changes state"
}

// serviceName is a unit or init script name: no slash, not . or ...
var serviceName = regexp.MustCompile(`^[A-Za-z0-9_@][A-Za-z0-9_@.:+-]*$`)

// checkCrontab allows listing (-l) only.
func checkCrontab(args []arg) (Action, string) {
	p := crontabSpec.parse(args)
	if p.unknown != "" {
		return Approve, p.unknown
	}
	if _, ok := p.onlyOpts("l", "u"); !ok || !p.has("l") || len(p.operands) > 0 {
		return Approve, "crontab without -l installs, edits or removes a crontab"
	}
	return Allow, "lists the crontab"
}

// checkIptables allows listing rules only.
func checkIptables(args []arg) (Action, string) {
	p := iptablesSpec.parse(args)
	if p.unknown != "" {
		return Approve, p.unknown
	}
	if !p.has("L", "S", "list", "list-rules") {
		return Approve, "iptables without -L/-S changes rules"
	}
	if bad, ok := p.onlyOpts("L", "S", "n", "v", "x", "t", "w", "W", "list", "list-rules", "numeric", "verbose", "exact", "line-numbers", "table", "wait"); !ok {
		return Approve, "iptables " + bad + " may change rules"
	}
	return Allow, "lists rules"
}

// checkEthtool allows showing an interface and its settings.
func checkEthtool(args []arg) (Action, string) {
	p := ethtoolSpec.parse(args)
	if p.unknown != "" {
		return Approve, p.unknown
	}
	if bad, ok := p.onlyOpts("i", "S", "k", "g", "a", "c", "l", "m", "T", "P", "driver", "statistics", "show-features", "show-ring", "show-pause", "show-coalesce", "show-channels", "module-info", "show-time-stamping", "show-permaddr"); !ok || len(p.operands) > 1 {
		return Approve, "ethtool " + orText(bad, "with these arguments") + " changes interface settings"
	}
	return Allow, ""
}

// checkMount allows listing mounts (no operands; -l, -t TYPE).
func checkMount(args []arg) (Action, string) {
	p := mountSpec.parse(args)
	if p.unknown != "" {
		return Approve, p.unknown
	}
	if _, ok := p.onlyOpts("l", "t"); !ok || len(p.operands) > 0 {
		return Approve, "mount with these arguments mounts a file system"
	}
	return Allow, "lists mounts"
}

// checkDpkg allows the query options.
func checkDpkg(args []arg) (Action, string) {
	p := dpkgSpec.parse(args)
	if p.unknown != "" {
		return Approve, p.unknown
	}
	if bad, ok := p.onlyOpts("l", "L", "s", "S", "p", "list", "listfiles", "status", "search", "print-avail", "get-selections", "print-architecture", "version", "audit", "C"); !ok || len(p.opts) == 0 {
		return Approve, "dpkg " + orText(bad, "without a query option") + " changes packages"
	}
	return Allow, "queries packages"
}

// rpmRefused are rpm options that run code (macros, pipes), point it at
// another database or root, or change the database; install and erase
// modes need no entry, as rpm refuses to mix them with a query.
var rpmRefused = []string{"E", "D", "eval", "define", "undefine", "macros", "load", "pipe", "rcfile", "dbpath", "root",
	"setperms", "setugids", "restore", "setcaps", "import", "rebuilddb", "initdb"}

// checkRpm allows queries (-q…) and verification (-V), without macros.
func checkRpm(args []arg) (Action, string) {
	p := rpmSpec.parse(args)
	if p.unknown != "" {
		return Approve, p.unknown
	}
	if !p.has("q", "V", "query", "verify", "version") {
		return Approve, "rpm without a query changes packages"
	}
	if o := p.find(rpmRefused...); o != nil {
		return Approve, fmt.Sprintf("rpm %s runs macros or changes packages", o)
	}
	for _, a := range args {
		if strings.Contains(a.val, "%(") || strings.Contains(a.val, "%{lua") {
			return Approve, "rpm expands macros that run code"
		}
	}
	return Allow, "queries packages"
}

// checkChronyc allows one monitoring command given on the line; without
// one chronyc reads commands from its input.
func checkChronyc(args []arg) (Action, string) {
	p := chronycSpec.parse(args)
	if p.unknown != "" {
		return Approve, p.unknown
	}
	if p.has("m", "f") {
		return Approve, "chronyc -m/-f runs several commands"
	}
	reads := []string{"tracking", "sources", "sourcestats", "activity", "ntpdata", "serverstats", "clients", "selectdata"}
	if len(p.operands) != 1 || !slices.Contains(reads, p.operands[0].val) {
		return Approve, "chronyc needs exactly one monitoring command (tracking, sources, …)"
	}
	return Allow, p.operands[0].val + " only shows state"
}

// checkGo: every go command, go version and go env included, first
// selects a toolchain, and a go.mod or GOTOOLCHAIN naming a newer one
// makes it download that toolchain and run it.
func checkGo([]arg) (Action, string) {
	return Approve, "go may download a Go toolchain and run it (GOTOOLCHAIN, go.mod's toolchain line)"
}

// checkApachectl allows the configuration dumps and tests.
func checkApachectl(args []arg) (Action, string) {
	if len(args) == 1 && args[0].static() && slices.Contains([]string{"-S", "-t", "-M", "-v", "-V", "-l", "-L", "configtest", "-t -D DUMP_VHOSTS", "status", "fullstatus"}, args[0].val) {
		return Allow, "shows or tests the configuration"
	}
	return Approve, "apachectl with these arguments controls the server"
}

// redisReads are redis-cli commands that only read.
var redisReads = []string{"ping", "info", "dbsize", "time", "lastsave", "role", "memory", "slowlog", "latency", "client", "config", "cluster", "--version", "--latency", "--stat", "--bigkeys", "--memkeys"}

// checkRedis allows a read-only redis-cli command given on the line; the
// subcommand of config/client/cluster must be a read (get, list, info),
// and config get must not name a credential or a pattern that could.
func checkRedis(args []arg) (Action, string) {
	p := redisSpec.parse(args)
	if p.unknown != "" {
		return Approve, p.unknown
	}
	for _, r := range redisRefused {
		if o := p.find(r.opts...); o != nil {
			return Approve, fmt.Sprintf("redis-cli %s %s", redisOpt(*o), r.why)
		}
	}
	if o := p.find("s"); o != nil {
		return Approve, fmt.Sprintf("redis-cli -s %s talks to whatever listens on that socket, which the egress check does not see", o.value)
	}
	if o := p.find("p"); o != nil && !p.has("h", "u") && o.value != "6379" {
		// 127.0.0.1 on that port: a service the egress check of -h
		// would judge, reached without naming a host.
		return Approve, fmt.Sprintf("redis-cli -p %s talks to whatever listens on that port of 127.0.0.1", o.value)
	}
	if len(p.operands) == 0 {
		if p.has("version", "latency", "stat", "bigkeys", "memkeys", "hotkeys", "scan") {
			return Allow, ""
		}
		return Approve, "redis-cli without a command is interactive"
	}
	cmd := strings.ToLower(p.operands[0].val)
	if !slices.Contains(redisReads, cmd) {
		return Approve, "redis-cli " + cmd + " may change data"
	}
	if len(p.operands) > 1 && slices.Contains([]string{"config", "client", "cluster", "memory", "slowlog", "latency"}, cmd) {
		sub := strings.ToLower(p.operands[1].val)
		if !slices.Contains([]string{"get", "list", "info", "stats", "doctor", "usage", "nodes", "slots", "shards", "myid", "latest", "history", "len", "getname", "id"}, sub) {
			return Approve, "redis-cli " + cmd + " " + sub + " may change the server"
		}
	}
	if why := redisConfigSecret(cmd, p.operands[1:]); why != "" {
		return Approve, why
	}
	return Allow, "reads server state"
}

// redisOpt is an option as redis-cli spells it: one dash before a
// letter, two before a word.
func redisOpt(o opt) string {
	if len(o.name) == 1 {
		return "-" + o.name
	}
	return "--" + o.name
}

// redisRefused are redis-cli's options that read commands or arguments
// from elsewhere than the line, write files, or act on other servers.
var redisRefused = []struct {
	opts []string
	why  string
}{
	{[]string{"x", "X", "pipe"}, "sends what it reads on its standard input as a command or an argument"},
	{[]string{"eval", "ldb", "ldb-sync-mode"}, "runs a Lua script from a file the policy cannot read"},
	{[]string{"rdb", "functions-rdb"}, "writes the server's data to a file"},
	{[]string{"replica", "slave"}, "streams every write the server takes, data included"},
	{[]string{"cluster"}, "manages the cluster: it can run commands on every node and move data"},
	{[]string{"r", "i", "intrinsic-latency", "lru-test"}, "repeats commands or loads the server or the host"},
}

// redisSecretParams are the fragments of configuration names whose
// values are credentials (requirepass, masterauth, tls-key-file-pass).
var redisSecretParams = []string{"pass", "auth", "secret", "key", "acl", "user"}

// redisConfigSecret: CONFIG GET takes glob patterns, matched without
// case: one that could match a credential's name (requirepass, *,
// ?equirepass, [r]equirepass) prints it.
func redisConfigSecret(cmd string, rest []arg) string {
	if cmd != "config" || len(rest) == 0 || strings.ToLower(rest[0].val) != "get" {
		return ""
	}
	for _, a := range rest[1:] {
		v := strings.ToLower(a.val)
		if !a.static() || strings.ContainsAny(v, "*?[\\") {
			return fmt.Sprintf("redis-cli config get %s is a pattern that could match a password", a.show())
		}
		for _, frag := range redisSecretParams {
			if strings.Contains(v, frag) {
				return fmt.Sprintf("redis-cli config get %s prints a credential", a.show())
			}
		}
	}
	return ""
}
