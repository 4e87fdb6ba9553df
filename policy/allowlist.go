package policy

import (
	"fmt"
	"slices"
	"strings"
)

// argCheck judges a program's arguments: Allow when they keep it
// read-only, else the action and why.
type argCheck func(args []arg) (Action, string)

// allowlist is the built-in read-only allowlist. A nil check means no
// argument can make the program write, run something else or reach out;
// otherwise the check decides from the parsed arguments.
var allowlist = map[string]argCheck{}

func init() {
	for _, name := range strings.Fields(`
		ls cat tac head tail grep egrep fgrep zgrep zegrep zfgrep zcat bzcat xzcat wc cut tr column nl od
		hexdump strings stat readlink realpath basename dirname md5sum sha1sum sha224sum sha256sum sha384sum
		sha512sum b2sum cksum cmp comm join paste fold fmt expand unexpand rev seq echo true false : type
		which whereis id whoami groups w who last lastb users locale nproc arch tty pwd
		du df free uptime pgrep pidof pstree lsof netstat dig host nslookup traceroute traceroute6 tracepath
		uname lsblk lscpu lsmem lspci lsusb lsmod findmnt vmstat iostat mpstat base64 base32 diff sleep
		cd pushd popd dirs exit return break continue umask ulimit getconf whatis namei lsattr getfacl
		pg_isready lsns lsipc`) {
		allowlist[name] = nil
	}
	checks := map[string]argCheck{
		// lsb_release prints the release from /etc/os-release; the file it
		// sources instead when LSB_OS_RELEASE is set is an assignment,
		// which needs approval on its own.
		"lsb_release": maxOperands(lsbReleaseSpec, 0, "lsb_release takes no operands"),

		"sort": checkSort, "uniq": checkUniq, "tree": checkTree, "file": checkFile, "lastlog": checkLastlog,
		"test": checkTest, "[": checkTest, "wait": checkWait, "pidstat": checkPidstat,
		"xxd": checkXxd, "find": checkFind, "sed": checkSed, "tar": checkTar,
		"awk": checkAwk, "gawk": checkAwk, "mawk": checkAwk, "nawk": checkAwk,
		"read": checkRead, "printenv": checkPrintenv, "ps": checkPs, "getent": checkGetent, "printf": checkPrintf, "top": checkTop, "tload": checkTload,
		"date": checkDate, "hostname": checkHostname, "dmesg": checkDmesg, "sysctl": checkSysctl,
		"ping": checkPing, "ping6": checkPing, "mtr": checkMtr, "ss": checkSs, "ip": checkIP,
		"curl": checkCurl, "nc": checkNc, "ncat": checkNcat, "openssl": checkOpenssl,
		"journalctl": checkJournalctl, "systemctl": checkSystemctl, "service": checkService,
		"crontab": checkCrontab, "iptables": checkIptables, "ip6tables": checkIptables, "ethtool": checkEthtool,
		"mount": checkMount, "timedatectl": verbs(timedatectlSpec, 0, "status", "show", "list-timezones", "timesync-status", "show-timesync"),
		"hostnamectl": verbs(hostnamectlSpec, 0, "status"), "chronyc": checkChronyc,
		"loginctl": verbs(loginctlSpec, 0, "list-sessions", "list-users", "list-seats", "show-session", "show-user", "session-status", "user-status"),
		"dpkg":     checkDpkg, "rpm": checkRpm, "apt": noConfig(verbs(aptSpec, 0, "list", "show", "policy", "search", "depends", "rdepends")),
		"apt-cache": noConfig(verbs(aptSpec, 0, "policy", "show", "search", "depends", "rdepends", "madison", "showpkg", "stats")),
		"git":       checkGit, "kubectl": checkKubectl, "helm": checkHelm, "docker": checkDocker, "podman": checkDocker,
		"nginx": onlyOptions(nginxSpec, "t", "T", "v", "V", "q"), "apachectl": checkApachectl, "apache2ctl": checkApachectl,
		"redis-cli": checkRedis, "jq": checkJq, "mysql": versionOnly, "psql": versionOnly, "java": versionOnly, "go": checkGo,
	}
	for name, c := range checks {
		allowlist[name] = c
	}
}

// lsbReleaseSpec is lsb_release's options: Debian's shell script and the
// Python one it replaced take the same, and no operands.
var lsbReleaseSpec = optSpec{short: "hvidrcas", long: []string{"help", "version", "id", "description", "release", "codename", "all", "short"}}

// neverAllowlisted names programs whose arguments are code or a command:
// allowlisting them would allow anything.
func neverAllowlisted(name string) bool {
	_, h := handlers[name]
	return h || isInterpreter(name) || slices.Contains([]string{"awk", "gawk", "mawk", "nawk", "sed", "find", "perl"}, name)
}

// verbs allows a program whose first operand (after options taking no
// value, skipping n) is one of the read-only subcommands, or absent when
// the first verb listed is the default.
func verbs(spec optSpec, n int, allowed ...string) argCheck {
	return func(args []arg) (Action, string) {
		p := spec.parse(args)
		if p.unknown != "" {
			return Approve, p.unknown
		}
		if len(p.operands) <= n {
			return Allow, "shows status"
		}
		v := p.operands[n]
		if v.static() && slices.Contains(allowed, v.val) {
			return Allow, v.val + " is read-only"
		}
		return Approve, fmt.Sprintf("%s is not a read-only subcommand", v.show())
	}
}

// onlyOptions allows a program used with these options only.
func onlyOptions(spec optSpec, allowed ...string) argCheck {
	return func(args []arg) (Action, string) {
		p := spec.parse(args)
		if p.unknown != "" {
			return Approve, p.unknown
		}
		if bad, ok := p.onlyOpts(allowed...); !ok || len(p.operands) > 0 || len(p.opts) == 0 {
			return Approve, orText(bad, "these arguments") + " may change state"
		}
		return Allow, "only tests or shows its configuration"
	}
}

// versionOnly allows printing the version.
func versionOnly(args []arg) (Action, string) {
	if len(args) == 1 && args[0].static() && slices.Contains([]string{"--version", "-version", "-V", "version"}, args[0].val) {
		return Allow, "prints its version"
	}
	return Approve, "only the version query is read-only"
}

// maxOperands allows at most n operands.
func maxOperands(spec optSpec, n int, why string) argCheck {
	return func(args []arg) (Action, string) {
		p := spec.parse(args)
		if p.unknown != "" {
			return Approve, p.unknown
		}
		if len(p.operands) > n {
			return Approve, why
		}
		return Allow, ""
	}
}

// refuseOpts approves when any of the options is present.
func refuseOpts(p parsed, why string, names ...string) (Action, string) {
	if p.unknown != "" {
		return Approve, p.unknown
	}
	if o := p.find(names...); o != nil {
		return Approve, fmt.Sprintf("%s %s", o, why)
	}
	return Allow, ""
}

// noConfig refuses apt's -o/-c, which can set hooks that run commands.
func noConfig(next argCheck) argCheck {
	return func(args []arg) (Action, string) {
		if o := aptSpec.parse(args).find("o", "c", "option", "config-file"); o != nil {
			return Approve, o.String() + " sets configuration that can run commands"
		}
		return next(args)
	}
}
