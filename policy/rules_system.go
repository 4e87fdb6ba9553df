package policy

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// checkDate: -s or an operand not starting with + sets the clock.
func checkDate(args []arg) (Action, string) {
	p := dateSpec.parse(args)
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
	p := hostnameSpec.parse(args)
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
	p := dmesgSpec.parse(args)
	return refuseOpts(p, "changes the kernel log", "c", "C", "D", "E", "n", "read-clear", "clear", "console-off", "console-on", "console-level")
}

// checkSysctl: -w, -p, --system or NAME=VALUE write kernel parameters.
func checkSysctl(args []arg) (Action, string) {
	p := sysctlSpec.parse(args)
	for _, o := range p.operands {
		if strings.Contains(o.val, "=") {
			return Approve, "sysctl NAME=VALUE writes a kernel parameter"
		}
	}
	return refuseOpts(p, "writes kernel parameters", "w", "p", "f", "write", "load", "system")
}

// checkPing requires a count so that it ends; flood and preload are out.
func checkPing(args []arg) (Action, string) {
	p := pingSpec.parse(args)
	if p.unknown != "" {
		return Approve, p.unknown
	}
	if o := p.find("f", "l", "p"); o != nil {
		return Approve, fmt.Sprintf("ping %s floods or carries a payload", o)
	}
	for _, o := range p.findAll("i") {
		if v, err := strconv.ParseFloat(o.value, 64); err != nil || v < 0.2 {
			return Approve, fmt.Sprintf("ping -i %s floods", o.value)
		}
	}
	if !p.has("c") {
		return Approve, "ping without -c never ends"
	}
	return Allow, ""
}

func checkMtr(args []arg) (Action, string) {
	p := mtrSpec.parse(args)
	if !p.has("r", "w", "report", "report-wide", "j", "json") {
		return Approve, "mtr without --report is interactive"
	}
	return refuseOpts(p, "")
}

// checkSs: -K kills sockets, -D writes a file.
func checkSs(args []arg) (Action, string) {
	p := ssSpec.parse(args)
	if a, why := refuseOpts(p, "kills sockets or writes a file", "K", "D", "kill", "diag"); a != Allow {
		return a, why
	}
	if o := p.find("r", "resolve"); o != nil {
		return Approve, o.String() + " looks up a name for every address: DNS queries leave the host"
	}
	for _, w := range p.operands {
		if !w.static() {
			return Approve, fmt.Sprintf("the filter word %s is computed at run time (%s)", w.src, w.kindOr("a glob"))
		}
		// ss joins its arguments into one filter: 'sport = :5432' is three words.
		for _, tok := range strings.Fields(strings.NewReplacer("(", " ", ")", " ").Replace(w.val)) {
			if !ssFilterWord(tok) {
				return Approve, fmt.Sprintf("ss looks up %q as a host name in its filter (a DNS query leaves the host); write addresses as numbers", tok)
			}
		}
	}
	return Allow, ""
}

// ssFilterWords are the words of ss's filter language that name no host.
var ssFilterWords = map[string]bool{"state": true, "exclude": true, "dst": true, "src": true, "dport": true, "sport": true,
	"and": true, "or": true, "not": true, "eq": true, "neq": true, "ne": true, "gt": true, "lt": true, "ge": true, "le": true,
	"=": true, "==": true, "!=": true, ">": true, "<": true, ">=": true, "<=": true, "!": true, "(": true, ")": true, "&": true, "|": true,
	"all": true, "connected": true, "synchronized": true, "bucket": true, "big": true, "established": true, "syn-sent": true,
	"syn-recv": true, "fin-wait-1": true, "fin-wait-2": true, "time-wait": true, "closed": true, "close-wait": true,
	"last-ack": true, "listening": true, "listen": true, "closing": true, "autobound": true}

// ssFilterWord reports whether w, a word of ss's filter, names no host
// that ss would look up: a keyword, a state, a port (":22", ":ssh" from
// /etc/services), or an address written as numbers, with its prefix
// length or port ("10.0.0.0/8", "127.0.0.1:22", "[::1]:22", "*:22").
func ssFilterWord(w string) bool {
	w = strings.ToLower(w)
	if w == "" || ssFilterWords[w] || strings.HasPrefix(w, ":") {
		return true
	}
	host := w
	if h, _, err := net.SplitHostPort(w); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "*" {
		return true
	}
	if _, err := netip.ParsePrefix(host); err == nil {
		return true
	}
	_, err := netip.ParseAddr(host)
	return err == nil
}

// ipSpec is ip's own options in the order ip.c tries them: a word is the
// first option it is a prefix of (-b is -batch, never -brief).
var ipSpec = optSpec{family: ipStyle, long: []string{"loops=", "family=", "4", "6", "0", "M", "B", "human", "human-readable", "iec",
	"stats", "statistics", "details", "resolve", "oneline", "timestamp", "tshort", "Version", "force", "batch=", "brief", "json",
	"pretty", "rcvbuf=", "color", "help", "netns=", "Numeric", "all", "echo"}}

// ipObjects are ip's objects in the order ip.c matches an abbreviation
// (ip m is maddress, ip mo monitor); read marks the ones whose show or
// list verbs only read.
var ipObjects = []struct {
	name string
	read bool
}{{"address", true}, {"addrlabel", true}, {"maddress", true}, {"route", true}, {"rule", true}, {"neighbor", true},
	{"neighbour", true}, {"ntable", true}, {"ntbl", true}, {"link", true}, {"l2tp", false}, {"fou", false}, {"ila", false},
	{"macsec", false}, {"tunnel", true}, {"tunl", true}, {"tuntap", true}, {"tap", true}, {"token", false}, {"tcpmetrics", false},
	{"tcp_metrics", false}, {"monitor", true}, {"xfrm", false}, {"mroute", true}, {"mrule", true}, {"netns", true},
	{"netconf", true}, {"vrf", true}, {"sr", false}, {"nexthop", true}, {"mptcp", false}, {"ioam", false}, {"stats", true}, {"help", true}}

// ipObject resolves an abbreviation as ip does: the first object in its
// table that the word is a prefix of.
func ipObject(word string) (string, bool) {
	for _, o := range ipObjects {
		if word != "" && strings.HasPrefix(o.name, word) {
			return o.name, o.read
		}
	}
	return "", false
}

// checkIP allows `ip [opts] OBJECT [show|list|get …]`, objects and
// options abbreviated as ip resolves them.
func checkIP(args []arg) (Action, string) {
	p := ipSpec.parse(args)
	if p.unknown != "" {
		return Approve, p.unknown
	}
	if o := p.find("batch", "force"); o != nil {
		return Approve, "ip -" + o.name + " runs commands from a file or its input"
	}
	if len(p.operands) == 0 {
		return Allow, ""
	}
	obj, verb := p.operands[0], p.operands[1:]
	name, read := ipObject(obj.val)
	if !obj.static() || !read {
		return Approve, fmt.Sprintf("ip %s is not a read-only object", obj.show())
	}
	if name == "monitor" || name == "help" {
		return Allow, "watches network events"
	}
	// Only whole verbs (and sh, sho, ls): an abbreviation resolves in each
	// object's own order, where "s" is "set" for link.
	if len(verb) == 0 || (verb[0].static() && slices.Contains([]string{"show", "sh", "sho", "list", "lst", "ls"}, verb[0].val)) ||
		(verb[0].static() && verb[0].val == "get" && slices.Contains([]string{"route", "neighbor", "neighbour"}, name)) {
		return Allow, "shows network state"
	}
	return Approve, fmt.Sprintf("ip %s %s changes network state", name, verb[0].show())
}

// checkCurl allows GET-like requests that write nothing but standard
// output.
func checkCurl(args []arg) (Action, string) {
	p := curlSpec.parse(args)
	if p.unknown != "" {
		return Approve, p.unknown
	}
	for _, u := range curlURLs(p) {
		if why := curlScheme(u); why != "" {
			return Approve, why
		}
	}
	if o := p.find("proto", "proto-redir", "proto-default"); o != nil {
		return Approve, fmt.Sprintf("curl %s enables other protocols", o)
	}
	// Every occurrence is judged, the strictest first: curl takes the
	// last -X, -w and -D, and one -o per URL.
	var act Action
	var why string
	for _, o := range p.findAll("o", "output", "D", "dump-header") {
		if harmlessSink(o.value) || o.value == "-" {
			continue
		}
		if a, w := writeTo("curl "+o.String(), o.value); a > act || why == "" {
			act, why = a, w
		}
	}
	if why != "" {
		return act, why
	}
	for _, o := range p.findAll("X", "request") {
		if !slices.Contains([]string{"GET", "HEAD", "OPTIONS"}, strings.ToUpper(o.value)) {
			return Approve, "curl -X " + o.value + " may change state on the server"
		}
	}
	if why := curlReadsFiles(p); why != "" {
		return Approve, why
	}
	for _, o := range p.findAll("w", "write-out") {
		if strings.Contains(o.value, "%output{") {
			return Approve, "curl -w %output{} writes a file"
		}
	}
	return refuseOpts(p, "sends data, writes a file or reads a config the policy cannot see",
		"d", "F", "T", "K", "O", "c", "data", "data-raw", "data-binary", "data-urlencode", "data-ascii", "form", "form-string",
		"upload-file", "config", "remote-name", "remote-name-all", "cookie-jar", "trace", "trace-ascii", "stderr", "output-dir",
		"libcurl", "json", "create-dirs", "remote-header-name", "ftp-create-dirs", "etag-save", "hsts", "alt-svc", "variable",
		"unix-socket", "abstract-unix-socket", "netrc-file", "cookie", "trace-config", "upload-file", "quote", "mail-rcpt", "telnet-option")
}

// curlURLs are the URLs a curl command line fetches: its operands and
// --url values.
func curlURLs(p parsed) []string {
	var urls []string
	for _, o := range p.operands {
		urls = append(urls, o.val)
	}
	for _, o := range p.opts {
		if o.name == "url" {
			urls = append(urls, o.value)
		}
	}
	return urls
}

// curlGuess are the host prefixes from which curl guesses a scheme other
// than http for a URL without one.
var curlGuess = []string{"ftp.", "dict.", "ldap.", "imap.", "smtp.", "pop3."}

// curlScheme refuses every scheme but http and https: gopher://, dict://
// and telnet:// send raw bytes to any port, file:// reads local files.
// A URL without a scheme is http unless curl guesses otherwise from the
// host; a glob ({a,b} or [a-b]) could spell any scheme.
func curlScheme(u string) string {
	lower := strings.ToLower(u)
	scheme, _, hasScheme := strings.Cut(lower, "://")
	switch {
	case hasScheme && scheme != "http" && scheme != "https":
		return fmt.Sprintf("curl %s uses a scheme other than http and https", u)
	case hasScheme:
		return ""
	case strings.ContainsAny(lower, "{[") || strings.Contains(lower, ":/"):
		return fmt.Sprintf("curl %s does not say plainly which scheme it uses", u)
	}
	for _, g := range curlGuess {
		if strings.HasPrefix(lower, g) {
			return fmt.Sprintf("curl guesses a scheme other than http for %s", u)
		}
	}
	return ""
}

// checkNcat allows Nmap ncat's port probes (-z) only: -o, --hex-dump and
// --append-output write files even then.
func checkNcat(args []arg) (Action, string) {
	p := ncatSpec.parse(args)
	if p.unknown != "" {
		return Approve, p.unknown
	}
	if !p.has("z", "zero-io") {
		return Approve, "ncat without -z sends data"
	}
	return refuseOpts(p, "runs a command, listens or writes a file", "e", "c", "l", "k", "o", "x", "exec", "sh-exec", "lua-exec", "listen",
		"keep-open", "output", "hex-dump", "append-output", "broker", "chat")
}

// checkNc allows port probes (-z) only.
func checkNc(args []arg) (Action, string) {
	p := ncSpec.parse(args)
	if !p.has("z") {
		return Approve, "nc without -z sends data"
	}
	return refuseOpts(p, "runs a command or listens", "e", "c", "l", "exec", "sh-exec", "lua-exec", "listen")
}

// opensslReads are the read-only openssl subcommands and their options
// that only read and print (OpenSSL's opt_next: -name, --name,
// -name=value); -out, -keylogfile, -writerand and every other option
// need approval.
var opensslReads = map[string][]string{
	"x509": {"in=", "inform=", "noout", "text", "dates", "startdate", "enddate", "subject", "issuer", "serial", "fingerprint", "sha1",
		"sha256", "sha384", "sha512", "md5", "pubkey", "modulus", "email", "ocspid", "ocsp_uri", "hash", "subject_hash", "issuer_hash",
		"subject_hash_old", "issuer_hash_old", "nameopt=", "certopt=", "dateopt=", "purpose", "checkend=", "checkhost=",
		"checkemail=", "checkip=", "ext=", "alias", "nocert", "outform=", "help"},
	"s_client": {"connect=", "host=", "port=", "servername=", "noservername", "showcerts", "verify=", "verify_return_error",
		"verify_hostname=", "verify_email=", "verify_ip=", "CAfile=", "CApath=", "CAstore=", "no-CAfile", "no-CApath", "no-CAstore",
		"brief", "state", "msg", "status", "tls1", "tls1_1", "tls1_2", "tls1_3", "no_tls1", "no_tls1_1", "no_tls1_2", "no_tls1_3",
		"dtls", "dtls1", "dtls1_2", "cipher=", "ciphersuites=", "alpn=", "starttls=", "xmpphost=", "name=", "quiet", "crlf",
		"ign_eof", "no_ign_eof", "4", "6", "sigalgs=", "curves=", "groups=", "prexit", "ct", "noct", "ctlogfile=", "help", "timeout",
		"nbio", "debug", "tlsextdebug", "security_debug", "security_debug_verbose", "reconnect", "no_ticket", "legacy_server_connect",
		"auth_level=", "x509_strict", "partial_chain", "crl_check", "crl_check_all", "verify_depth=", "tls1_3", "enable_pha"},
	"verify": {"CAfile=", "CApath=", "CAstore=", "no-CAfile", "no-CApath", "no-CAstore", "untrusted=", "trusted=", "purpose=",
		"verbose", "show_chain", "crl_check", "crl_check_all", "CRLfile=", "partial_chain", "x509_strict", "verify_hostname=",
		"verify_email=", "verify_ip=", "attime=", "issuer_checks", "verify_depth=", "auth_level=", "policy_check", "help"},
	"req":       {"in=", "inform=", "noout", "text", "verify", "subject", "pubkey", "modulus", "nameopt=", "reqopt=", "verbose", "help"},
	"crl":       {"in=", "inform=", "noout", "text", "hash", "hash_old", "issuer", "lastupdate", "nextupdate", "fingerprint", "crlnumber", "CAfile=", "CApath=", "nameopt=", "verify", "help"},
	"ciphers":   {"v", "V", "s", "stdname", "tls1", "tls1_1", "tls1_2", "tls1_3", "psk", "srp", "ciphersuites=", "convert=", "help"},
	"version":   {"a", "b", "d", "e", "f", "o", "p", "r", "v", "c", "m", "help"},
	"asn1parse": {"in=", "inform=", "offset=", "length=", "i", "dump", "dlimit=", "strparse=", "noout", "item=", "help"},
}

// checkOpenssl allows inspecting certificates and connections.
func checkOpenssl(args []arg) (Action, string) {
	if len(args) == 0 || !args[0].static() {
		return Approve, "openssl without a known subcommand"
	}
	opts, ok := opensslReads[args[0].val]
	if !ok {
		return Approve, "openssl " + args[0].val + " is not a read-only subcommand"
	}
	if p := (optSpec{family: openssl, long: opts}).parse(args[1:]); p.unknown != "" {
		return Approve, "openssl " + args[0].val + ": " + p.unknown
	}
	return Allow, ""
}

// curlReadsFiles says why a curl command line loads code or reads a local
// file into the request: an OpenSSL engine (a shared object), headers or
// a query from a file (@FILE), a cookie file (-b without "="), or the
// credentials in a netrc file.
func curlReadsFiles(p parsed) string {
	if o := p.find("engine", "n", "netrc", "netrc-optional"); o != nil {
		return fmt.Sprintf("curl %s loads a library or reads credentials from a file", o)
	}
	for _, o := range p.findAll("key-type", "cert-type", "proxy-key-type", "proxy-cert-type") {
		if strings.EqualFold(o.value, "ENG") {
			return fmt.Sprintf("curl %s ENG loads an OpenSSL engine", o)
		}
	}
	for _, o := range p.findAll("H", "header", "proxy-header") {
		if strings.HasPrefix(o.value, "@") {
			return fmt.Sprintf("curl %s @FILE sends the headers in a local file", o)
		}
	}
	// -w @FILE reads a format the policy cannot see (%output{} writes a
	// file); --url @FILE reads URLs whose schemes are not checked.
	for _, o := range p.findAll("w", "write-out", "url") {
		if strings.HasPrefix(o.value, "@") {
			return fmt.Sprintf("curl %s @FILE reads what it does from a local file", o)
		}
	}
	for _, o := range p.findAll("url-query") {
		v := strings.TrimPrefix(o.value, "+")
		if name, _, _ := strings.Cut(v, "="); strings.Contains(name, "@") {
			return "curl --url-query with @FILE sends a local file"
		}
	}
	for _, o := range p.findAll("b", "cookie") {
		if !strings.Contains(o.value, "=") {
			return fmt.Sprintf("curl %s %s reads a cookie file", o, o.value)
		}
	}
	return ""
}
