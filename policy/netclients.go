package policy

import (
	"fmt"
	"slices"
	"strings"
)

// netClient finds where a network client connects or what names it asks
// a DNS server about (the name itself leaves the host: DNS carries data
// out as well as TCP), with the port it reaches at each destination; why
// says what else needs a person (a proxy, a batch file, an interactive
// mode).
type netClient func(args []arg) (dests []dest, why string)

// netClients are the programs that can carry data off the host. Those
// not on the allowlist need approval anyway; they are listed so that a
// config allowlist entry for them still has its destinations checked.
var netClients = map[string]netClient{
	"curl": curlDests, "wget": wgetDests, "wget2": genericDests,
	"nc": ncDests(ncSpec), "netcat": ncDests(ncSpec), "ncat": ncDests(ncatSpec), "socat": refuseDests("socat's addresses can name any host or run a program"),
	"telnet": hostPortDests("23"), "ftp": hostPortDests("21"), "sftp": genericDests, "scp": copyDests, "rsync": copyDests, "whois": genericDests,
	"nmap": genericDests, "hping3": genericDests, "arping": genericDests, "fping": echoDests(optSpec{lenient: true}), "ntpdate": genericDests,
	"openssl": opensslDests, "dig": digDests, "host": hostDests, "nslookup": nslookupDests, "getent": getentDests,
	"ping": lastOperand(pingSpec), "ping6": lastOperand(pingSpec), "traceroute": traceDests(tracerouteSpec),
	"traceroute6": traceDests(tracerouteSpec), "tracepath": traceDests(tracepathSpec), "tracepath6": traceDests(tracepathSpec),
	"mtr": mtrDests, "pg_isready": pgIsreadyDests, "redis-cli": redisDests, "chronyc": chronycDests,
	"git": gitDests, "helm": helmDests, "systemctl": remoteHostFlag(systemctlSpec), "timedatectl": remoteHostFlag(timedatectlSpec),
	"hostnamectl": remoteHostFlag(hostnamectlSpec), "loginctl": remoteHostFlag(loginctlSpec), "mysql": genericDests, "psql": genericDests,
}

var (
	tracerouteSpec = optSpec{lenient: true, short: "46dFITnrAUDVef:g:i:m:N:p:t:l:w:q:s:z:M:O:P:", long: []string{"icmp", "tcp", "udp", "udplite",
		"sctp", "port=", "tos=", "flowlabel=", "queries=", "sendwait=", "source=", "interface=", "first=", "max-hops=", "sim-queries=",
		"wait=", "module=", "options=", "sport=", "fwmark=", "mtu", "back", "help", "version"}}
	tracepathSpec = optSpec{lenient: true, short: "46bnl:m:p:V"}
	digSpec       = optSpec{lenient: true, short: "46himruvb:c:f:k:p:q:t:x:y:"}
	hostSpec      = optSpec{lenient: true, short: "46acdlrsTUvVwCc:N:R:t:W:m:p:"}
	pgIsreadySpec = optSpec{lenient: true, short: "d:h:p:qt:U:V?", long: []string{"dbname=", "host=", "port=", "quiet", "timeout=", "username=", "version", "help"}}
	getentSpec    = optSpec{short: "s:i", long: []string{"service=", "no-idn", "help", "usage", "version"}}
)

// genericDests reads every operand of a tool whose grammar the policy
// does not model as a possible destination, at a port it cannot tell.
func genericDests(args []arg) ([]dest, string) {
	var out []dest
	for _, o := range (optSpec{lenient: true}).parse(args).operands {
		if !isNumber(o.val) {
			out = append(out, dest{word: o.val})
		}
	}
	return out, ""
}

// urlDests reads every operand as a URL (or host[:port], which such tools
// fetch over http).
func urlDests(spec optSpec) netClient {
	return func(args []arg) ([]dest, string) {
		var out []dest
		for _, o := range spec.parse(args).operands {
			out = append(out, dest{word: o.val, port: "80"})
		}
		return out, ""
	}
}

// hostPortDests: telnet and ftp take HOST [PORT].
func hostPortDests(def string) netClient {
	return func(args []arg) ([]dest, string) {
		p := (optSpec{lenient: true}).parse(args)
		if len(p.operands) == 0 {
			return nil, ""
		}
		port := def
		if len(p.operands) > 1 {
			port = portWord(p.operands[1].val)
		}
		return []dest{{word: p.operands[0].val, port: port}}, ""
	}
}

// portWord is a port operand as a number, or "" when it is a service
// name, a range or a list the policy does not read.
func portWord(s string) string {
	if validPort(s) {
		return s
	}
	return ""
}

// echoDests: every operand is a host the tool only sends echo requests.
func echoDests(spec optSpec) netClient {
	return func(args []arg) ([]dest, string) {
		var out []dest
		for _, o := range spec.parse(args).operands {
			out = append(out, dest{word: o.val, portless: true})
		}
		return out, ""
	}
}

// traceDests: traceroute's and tracepath's first operand; a gateway (-g)
// is reached too. Their default probes carry no data of the caller's;
// a chosen port, protocol or method (-p, -T, -U, -P, -M) reaches a port.
func traceDests(spec optSpec) netClient {
	return func(args []arg) ([]dest, string) {
		p := spec.parse(args)
		var out []dest
		portless := !p.has("p", "port", "T", "tcp", "U", "udp", "udplite", "sctp", "P", "M", "module")
		port := ""
		if o := p.find("p", "port"); o != nil {
			port = portWord(o.value)
		}
		if len(p.operands) > 0 {
			out = append(out, dest{word: p.operands[0].val, port: port, portless: portless})
		}
		for _, o := range p.findAll("g") {
			out = append(out, dest{word: o.value, portless: true})
		}
		return out, ""
	}
}

// mtrDests: mtr sends echo requests unless told to probe a port (-T, -u,
// -S, -P).
func mtrDests(args []arg) ([]dest, string) {
	p := mtrSpec.parse(args)
	portless := !p.has("T", "tcp", "u", "udp", "S", "sctp", "P", "port")
	port := ""
	if o := p.find("P", "port"); o != nil {
		port = portWord(o.value)
	}
	var out []dest
	for _, o := range p.operands {
		out = append(out, dest{word: o.val, port: port, portless: portless})
	}
	return out, ""
}

func lastOperand(spec optSpec) netClient {
	return func(args []arg) ([]dest, string) {
		p := spec.parse(args)
		if len(p.operands) == 0 {
			return nil, ""
		}
		return []dest{{word: p.operands[len(p.operands)-1].val, portless: true}}, ""
	}
}

func refuseDests(why string) netClient {
	return func([]arg) ([]dest, string) { return nil, why }
}

func isNumber(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// curlDests are curl's URLs; a proxy or a name mapping sends the request
// through another host.
func curlDests(args []arg) ([]dest, string) {
	p := curlSpec.parse(args)
	if o := p.find("x", "proxy", "preproxy", "socks4", "socks4a", "socks5", "socks5-hostname", "connect-to", "resolve", "doh-url", "dns-servers"); o != nil {
		return nil, fmt.Sprintf("curl %s sends the request through another host or resolver", o)
	}
	var out []dest
	for _, u := range curlURLs(p) {
		out = append(out, dest{word: u, port: "80"}) // curl's scheme for a URL without one is http
	}
	return out, ""
}

// ncDests: nc HOST PORT…; -z probes, without it what is on its input is
// sent.
func ncDests(spec optSpec) netClient {
	return func(args []arg) ([]dest, string) {
		p := spec.parse(args)
		if o := p.find("x", "X", "proxy", "proxy-type"); o != nil {
			return nil, fmt.Sprintf("%s connects through a proxy", o)
		}
		if p.has("U", "unixsock") || len(p.operands) == 0 {
			return nil, ""
		}
		host := p.operands[0].val
		if len(p.operands) == 1 {
			return []dest{{word: host}}, ""
		}
		var out []dest
		for _, o := range p.operands[1:] {
			out = append(out, dest{word: host, port: portWord(o.val)})
		}
		return out, ""
	}
}

// copyDests are scp's and rsync's remote operands: HOST:PATH and
// USER@HOST:PATH over ssh (scp -P, else 22), HOST::MODULE and rsync://
// URLs to an rsync daemon (--port, else 873). A remote shell of rsync's
// own (-e) may reach any port.
func copyDests(args []arg) ([]dest, string) {
	p := (optSpec{lenient: true}).parse(args)
	sshPort, daemonPort := "22", "873"
	if p.has("P", "e", "rsh", "o", "F", "J") { // scp -P PORT, rsync -e CMD: the policy does not read them
		sshPort = ""
	}
	if o := p.find("port"); o != nil {
		daemonPort = portWord(o.value)
	}
	var out []dest
	for _, o := range p.operands {
		v := o.val
		switch {
		case strings.Contains(v, "://"):
			out = append(out, dest{word: v, port: daemonPort})
		case strings.HasPrefix(v, "/") || strings.HasPrefix(v, ".") || !strings.Contains(v, ":"):
		case strings.Contains(v, "::"):
			host, _, _ := strings.Cut(v, "::")
			out = append(out, dest{word: host, port: daemonPort})
		default:
			out = append(out, dest{word: remoteHost(v), port: sshPort})
		}
	}
	return out, ""
}

// remoteHost is the [USER@]HOST of a [USER@]HOST:PATH or
// [USER@][IPv6]:PATH operand.
func remoteHost(v string) string {
	if i := strings.Index(v, "]:"); i >= 0 && strings.Contains(v[:i], "[") {
		return v[:i+1]
	}
	host, _, _ := strings.Cut(v, ":")
	return host
}

// opensslDests: s_client and s_time connect to -connect (default
// localhost:4433), a host:port operand, or -host and -port.
func opensslDests(args []arg) ([]dest, string) {
	if len(args) == 0 || (args[0].val != "s_client" && args[0].val != "s_time") {
		return nil, ""
	}
	spec := optSpec{family: openssl, long: opensslReads["s_client"], lenient: true}
	p := spec.parse(args[1:])
	if p.has("proxy") {
		return nil, "openssl -proxy connects through another host"
	}
	var out []dest
	for _, o := range p.findAll("connect") {
		out = append(out, dest{word: o.value, port: "4433"})
	}
	for _, o := range p.operands {
		out = append(out, dest{word: o.val, port: "4433"})
	}
	host, port := "", "4433"
	if o := p.find("host"); o != nil {
		host = o.value
	}
	if o := p.find("port"); o != nil {
		port = portWord(o.value)
	}
	if host != "" || len(out) == 0 {
		out = append(out, dest{word: orText(host, "localhost"), port: port})
	}
	return out, ""
}

// dnsTypes are query types and classes dig and host read as such, not
// as names.
var dnsTypes = strings.Fields(`a aaaa mx ns txt soa cname ptr srv any caa ds dnskey rrsig nsec nsec3 tlsa sshfp naptr spf hinfo
	axfr ixfr https svcb cds cdnskey loc rp afsdb dname uri in ch hs chaos hesiod`)

// digDests: the names asked about (and -x addresses) go to the resolver;
// an @server is reached itself, on -p's port or 53. +domain sets a
// search domain and -f reads queries from a file.
func digDests(args []arg) ([]dest, string) {
	p := digSpec.parse(args)
	if o := p.find("f", "k", "y"); o != nil {
		return nil, fmt.Sprintf("dig %s reads queries or a key from a file", o)
	}
	port := "53"
	if o := p.find("p"); o != nil {
		port = portWord(o.value)
	}
	var out []dest
	for _, o := range p.findAll("x", "q") {
		out = append(out, dest{word: o.value, portless: true})
	}
	for _, o := range p.operands {
		v := strings.ToLower(o.val)
		switch {
		case strings.HasPrefix(v, "@"):
			out = append(out, dest{word: v[1:], port: port})
		case strings.HasPrefix(v, "+domain") || strings.HasPrefix(v, "+do=") || strings.HasPrefix(v, "+dom"):
			return nil, "dig +domain sets the search domain the names are asked under"
		case strings.HasPrefix(v, "+"), slices.Contains(dnsTypes, v):
		default:
			out = append(out, dest{word: o.val, portless: true})
		}
	}
	return out, ""
}

// hostDests: host [-p PORT] NAME [SERVER].
func hostDests(args []arg) ([]dest, string) {
	p := hostSpec.parse(args)
	port := "53"
	if o := p.find("p"); o != nil {
		port = portWord(o.value)
	}
	return nameAndServer(p.operands, port), ""
}

// nameAndServer: the first word is a name asked about, the others
// servers reached on port.
func nameAndServer(words []arg, port string) []dest {
	var out []dest
	for i, w := range words {
		out = append(out, dest{word: w.val, port: port, portless: i == 0})
	}
	return out
}

// nslookupDests: nslookup [-opt…] NAME [SERVER] (-port=N); without a name
// it reads queries from its input.
func nslookupDests(args []arg) ([]dest, string) {
	var words []arg
	port := "53"
	for _, a := range args {
		if strings.HasPrefix(a.val, "-") && a.val != "-" {
			opt := strings.ToLower(a.val)
			if strings.Contains(opt, "domain") || strings.Contains(opt, "srchlist") {
				return nil, "nslookup -domain sets the search domain the names are asked under"
			}
			if v, ok := strings.CutPrefix(opt, "-po"); ok {
				_, v, _ = strings.Cut(v, "=")
				port = portWord(v)
			}
			continue
		}
		words = append(words, a)
	}
	if len(words) == 0 || words[0].val == "-" {
		return nil, "nslookup without a name reads queries from its input"
	}
	return nameAndServer(words, port), ""
}

// getentDests: the host databases resolve their keys through DNS; -s
// picks the NSS module, a library loaded by name.
func getentDests(args []arg) ([]dest, string) {
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
	var out []dest
	for _, k := range p.operands[1:] {
		out = append(out, dest{word: k.val, portless: true})
	}
	return out, ""
}

// pgIsreadyDests: -h HOST on -p PORT (else 5432); -d may be a connection
// string naming a host.
func pgIsreadyDests(args []arg) ([]dest, string) {
	p := pgIsreadySpec.parse(args)
	for _, o := range p.findAll("d", "dbname") {
		if strings.ContainsAny(o.value, "=/") {
			return nil, "pg_isready -d with a connection string names its own host"
		}
	}
	port := "5432"
	if o := p.find("p", "port"); o != nil {
		port = portWord(o.value)
	}
	var out []dest
	for _, o := range p.findAll("h", "host") {
		if !strings.HasPrefix(o.value, "/") { // a socket directory
			for _, h := range strings.Split(o.value, ",") {
				out = append(out, dest{word: h, port: port})
			}
		}
	}
	return out, ""
}

// redisDests: -h HOST on -p PORT (else 6379), -u URI (a socket, -s, is
// local).
func redisDests(args []arg) ([]dest, string) {
	p := redisSpec.parse(args)
	port := "6379"
	if o := p.find("p"); o != nil {
		port = portWord(o.value)
	}
	var out []dest
	for _, o := range p.findAll("h") {
		out = append(out, dest{word: o.value, port: port})
	}
	for _, o := range p.findAll("u") {
		out = append(out, dest{word: o.value, port: "6379"})
	}
	return out, ""
}

// chronycDests: -h HOST[,HOST…] on -p PORT (else 323).
func chronycDests(args []arg) ([]dest, string) {
	p := chronycSpec.parse(args)
	port := "323"
	if o := p.find("p"); o != nil {
		port = portWord(o.value)
	}
	var out []dest
	for _, o := range p.findAll("h") {
		for _, h := range strings.Split(o.value, ",") {
			out = append(out, dest{word: h, port: port})
		}
	}
	return out, ""
}

// remoteHostFlag: systemd tools' -H [USER@]HOST[:PORT] runs them over SSH
// there.
func remoteHostFlag(spec optSpec) netClient {
	return func(args []arg) ([]dest, string) {
		var out []dest
		for _, o := range spec.parse(args).findAll("H", "host") {
			w, _, _ := strings.Cut(o.value, "/") // HOST/CONTAINER
			out = append(out, dest{word: w, port: "22"})
		}
		return out, ""
	}
}

// gitDests: the URL operands of the subcommands that talk to a remote
// (ls-remote, fetch, clone, push, pull, remote add): scheme URLs and
// scp-like HOST:PATH over ssh; a remote's name is configuration already
// there.
func gitDests(args []arg) ([]dest, string) {
	g := gitGlobalSpec.parse(args)
	if len(g.rest) == 0 || !slices.Contains([]string{"ls-remote", "fetch", "pull", "push", "clone", "remote", "archive", "submodule", "request-pull"}, g.rest[0].val) {
		return nil, ""
	}
	var out []dest
	for _, o := range g.rest[1:] {
		v := o.val
		if strings.HasPrefix(v, "-") || strings.HasPrefix(v, "/") || strings.HasPrefix(v, ".") || strings.HasPrefix(v, "file://") {
			continue
		}
		if strings.Contains(v, "://") {
			out = append(out, dest{word: v})
		} else if host, _, ok := strings.Cut(v, ":"); ok && host != "" && !strings.Contains(host, "/") {
			out = append(out, dest{word: host, port: "22"})
		}
	}
	return out, ""
}

// helmDests: helm search hub asks Artifact Hub; repo add names a URL.
func helmDests(args []arg) ([]dest, string) {
	_, path, _ := subcommand(helmSpec, args)
	switch {
	case at(path, 0) == "search" && at(path, 1) == "hub":
		return []dest{{word: "hub.helm.sh", port: "443"}}, ""
	case at(path, 0) == "repo" && at(path, 1) == "add" && len(path) > 3:
		return []dest{{word: path[3]}}, ""
	}
	return nil, ""
}
