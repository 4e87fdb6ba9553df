package approvals

import (
	"fmt"
	"slices"
	"strings"
)

// checkDate: -s or an operand not starting with + sets the clock.
func checkDate(args []arg) (Action, string) {
	p := optSpec{shortArg: "dfrI", longArg: []string{"date", "file", "reference", "iso-8601", "rfc-3339", "set"}}.parse(args)
	if p.unknown != "" {
		return Approve, p.unknown
	}
	if p.has("s", "set") {
		return Approve, "date -s sets the clock"
	}
	for _, o := range p.operands {
		if !strings.HasPrefix(o.val, "+") {
			return Approve, "date with an operand sets the clock"
		}
	}
	return Allow, ""
}

// checkHostname: an operand or -F/-b sets the host name.
func checkHostname(args []arg) (Action, string) {
	p := optSpec{}.parse(args)
	if p.unknown != "" {
		return Approve, p.unknown
	}
	if bad, ok := p.onlyOpts("f", "i", "I", "s", "d", "A", "a", "y", "v", "fqdn", "long", "short", "domain", "ip-address", "all-ip-addresses", "all-fqdns", "alias", "yp", "nis"); !ok {
		return Approve, "hostname " + bad + " may set the host name"
	}
	if len(p.operands) > 0 {
		return Approve, "hostname NAME sets the host name"
	}
	return Allow, ""
}

// checkDmesg: clearing the ring buffer or changing the console level.
func checkDmesg(args []arg) (Action, string) {
	p := optSpec{shortArg: "FfnslS", longArg: []string{"file", "facility", "console-level", "level", "since", "until", "time-format"}}.parse(args)
	return refuseOpts(p, "changes the kernel log", "c", "C", "D", "E", "n", "read-clear", "clear", "console-off", "console-on", "console-level")
}

// checkSysctl: -w, -p, --system or NAME=VALUE write kernel parameters.
func checkSysctl(args []arg) (Action, string) {
	p := optSpec{shortArg: "pf", longArg: []string{"load", "pattern"}}.parse(args)
	for _, o := range p.operands {
		if strings.Contains(o.val, "=") {
			return Approve, "sysctl NAME=VALUE writes a kernel parameter"
		}
	}
	return refuseOpts(p, "writes kernel parameters", "w", "p", "f", "write", "load", "system")
}

// checkPing requires a count so that it ends; flood and preload are out.
func checkPing(args []arg) (Action, string) {
	p := optSpec{shortArg: "cisIWwlmMpQtTF", longArg: nil}.parse(args)
	if p.unknown != "" {
		return Approve, p.unknown
	}
	if p.has("f") {
		return Approve, "ping -f floods"
	}
	if !p.has("c") {
		return Approve, "ping without -c never ends"
	}
	return Allow, ""
}

func checkMtr(args []arg) (Action, string) {
	p := optSpec{shortArg: "cfimnpsBGQTuZ"}.parse(args)
	if !p.has("r", "w", "report", "report-wide", "j", "json") {
		return Approve, "mtr without --report is interactive"
	}
	return refuseOpts(p, "")
}

// checkSs: -K kills sockets, -D writes a file.
func checkSs(args []arg) (Action, string) {
	p := optSpec{shortArg: "fADF", longArg: []string{"family", "query", "socket", "diag", "filter"}}.parse(args)
	return refuseOpts(p, "kills sockets or writes a file", "K", "D", "kill", "diag")
}

// ipObjects are the ip objects whose show/list/get verbs read state.
var ipObjects = []string{"address", "addrlabel", "route", "link", "neighbour", "neighbor", "rule", "maddress", "netconf", "ntable", "tunnel", "tuntap", "vrf", "mroute", "monitor", "netns", "nexthop", "stats"}

// checkIP allows `ip [opts] OBJECT [show|list|get …]`; objects and verbs
// may be abbreviated as ip accepts them.
func checkIP(args []arg) (Action, string) {
	i := 0
	for ; i < len(args) && args[i].static() && strings.HasPrefix(args[i].val, "-"); i++ {
		switch strings.TrimLeft(args[i].val, "-") {
		case "b", "batch", "force":
			return Approve, "ip -batch runs commands from a file"
		case "n", "netns", "f", "family", "rc", "rcvbuf", "l", "loops":
			i++
		}
	}
	if i >= len(args) {
		return Allow, ""
	}
	obj, verb := args[i], args[i+1:]
	if !obj.static() || !slices.ContainsFunc(ipObjects, func(o string) bool { return strings.HasPrefix(o, obj.val) }) {
		return Approve, fmt.Sprintf("ip %s is not a read-only object", obj.show())
	}
	if len(verb) == 0 || (verb[0].static() && slices.Contains([]string{"show", "sh", "sho", "list", "lst", "ls", "get"}, verb[0].val)) {
		if strings.HasPrefix("netns", obj.val) && len(verb) > 0 && verb[0].val == "exec" {
			return Approve, "ip netns exec runs a command"
		}
		return Allow, "shows network state"
	}
	if strings.HasPrefix("monitor", obj.val) {
		return Allow, "watches network events"
	}
	return Approve, fmt.Sprintf("ip %s %s changes network state", obj.val, verb[0].show())
}

// checkCurl allows GET-like requests that write nothing but standard
// output.
func checkCurl(args []arg) (Action, string) {
	p := optSpec{shortArg: "ACEHKQTUXbcdDeFhmoruwxyYzP", longArg: []string{"user-agent", "header", "output", "request", "data", "data-raw", "data-binary", "data-urlencode", "form", "upload-file", "config", "cookie", "cookie-jar", "dump-header", "write-out", "max-time", "connect-timeout", "resolve", "cacert", "cert", "key", "proxy", "user", "referer", "range", "retry", "trace", "trace-ascii", "stderr", "output-dir", "libcurl", "json", "url"}}.parse(args)
	if p.unknown != "" {
		return Approve, p.unknown
	}
	if o := p.find("o", "output"); o != nil && !harmlessSink(o.value) && o.value != "-" {
		return writeTo("curl -o", o.value)
	}
	if o := p.find("X", "request"); o != nil && !slices.Contains([]string{"GET", "HEAD", "OPTIONS"}, strings.ToUpper(o.value)) {
		return Approve, "curl -X " + o.value + " may change state on the server"
	}
	if o := p.find("w", "write-out"); o != nil && strings.Contains(o.value, "%output{") {
		return Approve, "curl -w %output{} writes a file"
	}
	if o := p.find("D", "dump-header"); o != nil && !harmlessSink(o.value) && o.value != "-" {
		return writeTo("curl -D", o.value)
	}
	return refuseOpts(p, "sends data, writes a file or reads a config the policy cannot see",
		"d", "F", "T", "K", "O", "c", "data", "data-raw", "data-binary", "data-urlencode", "data-ascii", "form", "form-string",
		"upload-file", "config", "remote-name", "remote-name-all", "cookie-jar", "trace", "trace-ascii", "stderr", "output-dir",
		"libcurl", "json", "create-dirs", "remote-header-name", "ftp-create-dirs", "etag-save", "hsts", "alt-svc")
}

// checkNc allows port probes (-z) only.
func checkNc(args []arg) (Action, string) {
	p := optSpec{shortArg: "ceIiOpPqsTVwWxX", longArg: []string{"exec", "sh-exec", "lua-exec"}}.parse(args)
	if !p.has("z") {
		return Approve, "nc without -z sends data"
	}
	return refuseOpts(p, "runs a command or listens", "e", "c", "l", "exec", "sh-exec", "lua-exec", "listen")
}

// checkOpenssl allows inspecting certificates and connections.
func checkOpenssl(args []arg) (Action, string) {
	if len(args) == 0 || !args[0].static() {
		return Approve, "openssl without a known subcommand"
	}
	if !slices.Contains([]string{"x509", "s_client", "version", "verify", "crl", "req", "ciphers", "asn1parse"}, args[0].val) {
		return Approve, "openssl " + args[0].val + " is not a read-only subcommand"
	}
	for _, a := range args[1:] {
		if !a.static() {
			return Approve, fmt.Sprintf("the argument %s is computed at run time", a.src)
		}
		if slices.Contains([]string{"-out", "-keyout", "-new", "-newkey", "-signkey", "-CAcreateserial", "-sess_out", "-msgfile", "-keylogfile", "-writerand", "-trace"}, a.val) {
			return Approve, "openssl " + a.val + " writes a file"
		}
	}
	return Allow, ""
}
