package approvals

import (
	"fmt"
	"slices"
	"strings"
)

// netClient finds where a network client connects or what names it asks
// a DNS server about (the name itself leaves the host: DNS carries data
// out as well as TCP). dests are destination words for hostOf; why says
// what else needs a person (a proxy, a batch file, an interactive mode).
type netClient func(args []arg) (dests []string, why string)

// netClients are the programs that can carry data off the host. Those
// not on the allowlist need approval anyway; they are listed so that a
// config allowlist entry for them still has its destinations checked.
var netClients = map[string]netClient{
	"curl": curlDests, "wget": operandDests(optSpec{lenient: true, short: "e:i:o:O:a:P:t:T:w:U:Q:"}), "wget2": genericDests,
	"nc": ncDests(ncSpec), "netcat": ncDests(ncSpec), "ncat": ncDests(ncatSpec), "socat": refuseDests("socat's addresses can name any host or run a program"),
	"telnet": genericDests, "ftp": genericDests, "sftp": genericDests, "scp": copyDests, "rsync": copyDests, "whois": genericDests,
	"nmap": genericDests, "hping3": genericDests, "arping": genericDests, "fping": genericDests, "ntpdate": genericDests,
	"openssl": opensslDests, "dig": digDests, "host": hostDests, "nslookup": nslookupDests, "getent": getentDests,
	"ping": lastOperand(pingSpec), "ping6": lastOperand(pingSpec), "traceroute": firstOperand(tracerouteSpec),
	"traceroute6": firstOperand(tracerouteSpec), "tracepath": firstOperand(tracepathSpec), "tracepath6": firstOperand(tracepathSpec),
	"mtr": operandDests(mtrSpec), "pg_isready": pgIsreadyDests, "redis-cli": redisDests, "chronyc": chronycDests,
	"git": gitDests, "helm": helmDests, "systemctl": remoteHostFlag(systemctlSpec), "timedatectl": remoteHostFlag(timedatectlSpec),
	"hostnamectl": remoteHostFlag(hostnamectlSpec), "loginctl": remoteHostFlag(loginctlSpec), "mysql": genericDests, "psql": genericDests,
}

var (
	tracerouteSpec = optSpec{lenient: true, short: "46dFITnrAUDVef:g:i:m:N:p:t:l:w:q:s:z:M:O:", long: []string{"icmp", "tcp", "udp", "udplite",
		"sctp", "port=", "tos=", "flowlabel=", "queries=", "sendwait=", "source=", "interface=", "first=", "max-hops=", "sim-queries=",
		"wait=", "module=", "options=", "sport=", "fwmark=", "mtu", "back", "help", "version"}}
	tracepathSpec = optSpec{lenient: true, short: "46bnl:m:p:V"}
	digSpec       = optSpec{lenient: true, short: "46himruvb:c:f:k:p:q:t:x:y:"}
	hostSpec      = optSpec{lenient: true, short: "46acdlrsTUvVwCc:N:R:t:W:m:"}
	pgIsreadySpec = optSpec{lenient: true, short: "d:h:p:qt:U:V?", long: []string{"dbname=", "host=", "port=", "quiet", "timeout=", "username=", "version", "help"}}
	getentSpec    = optSpec{short: "s:i", long: []string{"service=", "no-idn", "help", "usage", "version"}}
)

// genericDests reads every operand of a tool whose grammar the policy
// does not model as a possible destination.
func genericDests(args []arg) ([]string, string) {
	return operandDests(optSpec{lenient: true})(args)
}

func operandDests(spec optSpec) netClient {
	return func(args []arg) ([]string, string) {
		var out []string
		for _, o := range spec.parse(args).operands {
			if !isNumber(o.val) {
				out = append(out, o.val)
			}
		}
		return out, ""
	}
}

func firstOperand(spec optSpec) netClient {
	return func(args []arg) ([]string, string) {
		p := spec.parse(args)
		var out []string
		if len(p.operands) > 0 {
			out = append(out, p.operands[0].val)
		}
		for _, o := range p.findAll("g") { // a gateway to route through
			out = append(out, o.value)
		}
		return out, ""
	}
}

func lastOperand(spec optSpec) netClient {
	return func(args []arg) ([]string, string) {
		p := spec.parse(args)
		if len(p.operands) == 0 {
			return nil, ""
		}
		return []string{p.operands[len(p.operands)-1].val}, ""
	}
}

func refuseDests(why string) netClient {
	return func([]arg) ([]string, string) { return nil, why }
}

func isNumber(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// curlDests are curl's URLs; a proxy or a name mapping sends the request
// through another host.
func curlDests(args []arg) ([]string, string) {
	p := curlSpec.parse(args)
	if o := p.find("x", "proxy", "preproxy", "socks4", "socks4a", "socks5", "socks5-hostname", "connect-to", "resolve", "doh-url", "dns-servers"); o != nil {
		return nil, fmt.Sprintf("curl %s sends the request through another host or resolver", o)
	}
	return curlURLs(p), ""
}

func ncDests(spec optSpec) netClient {
	return func(args []arg) ([]string, string) {
		p := spec.parse(args)
		if o := p.find("x", "X", "proxy", "proxy-type"); o != nil {
			return nil, fmt.Sprintf("%s connects through a proxy", o)
		}
		if p.has("U", "unixsock") {
			return nil, ""
		}
		if len(p.operands) == 0 {
			return nil, ""
		}
		return []string{p.operands[0].val}, ""
	}
}

// copyDests are scp's and rsync's remote operands: HOST:PATH,
// USER@HOST:PATH and rsync:// URLs.
func copyDests(args []arg) ([]string, string) {
	var out []string
	for _, o := range (optSpec{lenient: true}).parse(args).operands {
		v := o.val
		if strings.Contains(v, "://") || (strings.Contains(v, ":") && !strings.HasPrefix(v, "/") && !strings.HasPrefix(v, ".")) {
			out = append(out, v)
		}
	}
	return out, ""
}

// opensslDests: s_client and s_time connect to -connect (default
// localhost:4433) or -host.
func opensslDests(args []arg) ([]string, string) {
	if len(args) == 0 || (args[0].val != "s_client" && args[0].val != "s_time") {
		return nil, ""
	}
	var out []string
	for i := 1; i < len(args); i++ {
		name, val, hasVal := strings.Cut(strings.TrimLeft(args[i].val, "-"), "=")
		if !strings.HasPrefix(args[i].val, "-") {
			continue
		}
		switch name {
		case "connect", "host", "proxy":
			if !hasVal && i+1 < len(args) {
				i++
				val = args[i].val
			}
			if name == "proxy" {
				return nil, "openssl -proxy connects through another host"
			}
			out = append(out, val)
		}
	}
	return out, ""
}

// dnsTypes are query types and classes dig and host read as such, not
// as names.
var dnsTypes = strings.Fields(`a aaaa mx ns txt soa cname ptr srv any caa ds dnskey rrsig nsec nsec3 tlsa sshfp naptr spf hinfo
	axfr ixfr https svcb cds cdnskey loc rp afsdb dname uri in ch hs chaos hesiod`)

// digDests: the names asked about, @servers, -x addresses; +domain sets
// a search domain and -f reads queries from a file.
func digDests(args []arg) ([]string, string) {
	p := digSpec.parse(args)
	if o := p.find("f", "k", "y"); o != nil {
		return nil, fmt.Sprintf("dig %s reads queries or a key from a file", o)
	}
	var out []string
	for _, o := range p.findAll("x", "q") {
		out = append(out, o.value)
	}
	for _, o := range p.operands {
		v := strings.ToLower(o.val)
		switch {
		case strings.HasPrefix(v, "@"):
			out = append(out, v[1:])
		case strings.HasPrefix(v, "+domain") || strings.HasPrefix(v, "+do=") || strings.HasPrefix(v, "+dom"):
			return nil, "dig +domain sets the search domain the names are asked under"
		case strings.HasPrefix(v, "+"), slices.Contains(dnsTypes, v):
		default:
			out = append(out, o.val)
		}
	}
	return out, ""
}

// hostDests: host NAME [SERVER].
func hostDests(args []arg) ([]string, string) {
	var out []string
	for _, o := range hostSpec.parse(args).operands {
		out = append(out, o.val)
	}
	return out, ""
}

// nslookupDests: nslookup [-opt…] NAME [SERVER]; without a name it reads
// queries from its input.
func nslookupDests(args []arg) ([]string, string) {
	var out []string
	for _, a := range args {
		if strings.HasPrefix(a.val, "-") && a.val != "-" {
			if strings.Contains(strings.ToLower(a.val), "domain") || strings.Contains(strings.ToLower(a.val), "srchlist") {
				return nil, "nslookup -domain sets the search domain the names are asked under"
			}
			continue
		}
		out = append(out, a.val)
	}
	if len(out) == 0 || out[0] == "-" {
		return nil, "nslookup without a name reads queries from its input"
	}
	return out, ""
}

// getentDests: the host databases resolve their keys through DNS; -s
// picks the NSS module, a library loaded by name.
func getentDests(args []arg) ([]string, string) {
	p := getentSpec.parse(args)
	if p.unknown != "" {
		return nil, p.unknown
	}
	if p.has("s", "service") {
		return nil, "getent -s loads the NSS module it names"
	}
	if len(p.operands) == 0 || !slices.Contains([]string{"hosts", "ahosts", "ahostsv4", "ahostsv6", "networks"}, p.operands[0].val) {
		return nil, ""
	}
	var out []string
	for _, k := range p.operands[1:] {
		out = append(out, k.val)
	}
	return out, ""
}

// pgIsreadyDests: -h HOST; -d may be a connection string naming a host.
func pgIsreadyDests(args []arg) ([]string, string) {
	p := pgIsreadySpec.parse(args)
	for _, o := range p.findAll("d", "dbname") {
		if strings.ContainsAny(o.value, "=/") {
			return nil, "pg_isready -d with a connection string names its own host"
		}
	}
	var out []string
	for _, o := range p.findAll("h", "host") {
		if !strings.HasPrefix(o.value, "/") { // a socket directory
			out = append(out, strings.Split(o.value, ",")...)
		}
	}
	return out, ""
}

// redisDests: -h HOST, -u URI (a socket, -s, is local).
func redisDests(args []arg) ([]string, string) {
	p := redisSpec.parse(args)
	var out []string
	for _, o := range p.findAll("h", "u") {
		out = append(out, o.value)
	}
	return out, ""
}

// chronycDests: -h HOST[,HOST…].
func chronycDests(args []arg) ([]string, string) {
	var out []string
	for _, o := range chronycSpec.parse(args).findAll("h") {
		out = append(out, strings.Split(o.value, ",")...)
	}
	return out, ""
}

// remoteHostFlag: systemd tools' -H [USER@]HOST runs them over SSH there.
func remoteHostFlag(spec optSpec) netClient {
	return func(args []arg) ([]string, string) {
		var out []string
		for _, o := range spec.parse(args).findAll("H", "host") {
			out = append(out, o.value)
		}
		return out, ""
	}
}

// gitDests: the URL operands of the subcommands that talk to a remote
// (ls-remote, fetch, clone, push, pull, remote add): scheme URLs and
// scp-like HOST:PATH; a remote's name is configuration already there.
func gitDests(args []arg) ([]string, string) {
	g := gitGlobalSpec.parse(args)
	if len(g.rest) == 0 || !slices.Contains([]string{"ls-remote", "fetch", "pull", "push", "clone", "remote", "archive", "submodule", "request-pull"}, g.rest[0].val) {
		return nil, ""
	}
	var out []string
	for _, o := range g.rest[1:] {
		v := o.val
		if strings.HasPrefix(v, "-") || strings.HasPrefix(v, "/") || strings.HasPrefix(v, ".") || strings.HasPrefix(v, "file://") {
			continue
		}
		if strings.Contains(v, "://") {
			out = append(out, v)
		} else if host, _, ok := strings.Cut(v, ":"); ok && host != "" && !strings.Contains(host, "/") {
			out = append(out, host)
		}
	}
	return out, ""
}

// helmDests: helm search hub asks Artifact Hub; repo add names a URL.
func helmDests(args []arg) ([]string, string) {
	_, path, _ := subcommand(helmSpec, args)
	switch {
	case at(path, 0) == "search" && at(path, 1) == "hub":
		return []string{"hub.helm.sh"}, ""
	case at(path, 0) == "repo" && at(path, 1) == "add" && len(path) > 3:
		return []string{path[3]}, ""
	}
	return nil, ""
}
