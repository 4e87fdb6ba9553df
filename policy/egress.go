package policy

import (
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// egressList is where network clients may connect without a person: the
// inventory's hosts and addresses and policy.egress_allow (names,
// *.domains, addresses and CIDRs on any port; host:port on that port).
// Loopback is not on it by itself: a port on loopback may be a proxy or a
// tunnel that forwards anywhere, so only the loopback ports of services
// opsbot knows are (its own listener, inventory hosts on loopback, and
// the host:port entries an operator lists).
type egressList struct {
	names    map[string]bool // exact host names, lower case, without a final dot
	suffixes []string        // ".example.com": any name below it
	prefixes []netip.Prefix
	// endpoints are host:port entries of policy.egress_allow, on every host.
	endpoints map[endpoint]bool
	// botHost are the services opsbot knows on its own host (its
	// listener, inventory hosts on loopback): known there only.
	botHost map[endpoint]bool
}

// endpoint is a host as canonHost spells it and a port number.
type endpoint struct{ host, port string }

func (e endpoint) String() string { return net.JoinHostPort(e.host, e.port) }

// loopbackNames resolve to this machine without asking a DNS server.
var loopbackNames = []string{"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}

func newEgressList(allow, known, services []string) egressList {
	e := egressList{names: map[string]bool{}, endpoints: map[endpoint]bool{}, botHost: map[endpoint]bool{}}
	for _, k := range known {
		if ep, ok := splitEndpoint(k); ok {
			if isLoopback(ep.host) { // an inventory host on the bot's loopback: its SSH port only
				e.botHost[ep] = true
			} else {
				e.addHost(ep.host, false)
			}
			continue
		}
		if !isLoopback(normHost(k)) { // a loopback name or address would open every local port
			e.addHost(k, false)
		}
	}
	for _, a := range allow {
		if ep, ok := splitEndpoint(a); ok {
			e.endpoints[ep] = true
			continue
		}
		e.addHost(a, true)
	}
	for _, s := range services {
		for _, ep := range listenerEndpoints(s) {
			e.botHost[ep] = true
		}
	}
	return e
}

// listenerEndpoints are the endpoints a client on the bot's host reaches a
// listener at: a listener on every address (":8080", "0.0.0.0:8080",
// "[::]:8080") or on a loopback address is reached on 127.0.0.1,
// localhost or ::1 as it binds them.
func listenerEndpoints(listen string) []endpoint {
	h, p, err := net.SplitHostPort(strings.TrimSpace(listen))
	if err != nil || !validPort(p) {
		return nil
	}
	var hosts []string
	switch h = canonHost(h); h {
	case "", "::":
		hosts = []string{"127.0.0.1", "::1", "localhost"}
	case "0.0.0.0", "127.0.0.1":
		hosts = []string{"127.0.0.1", "localhost"}
	case "::1":
		hosts = []string{"::1", "localhost"}
	case "localhost":
		hosts = []string{"127.0.0.1", "::1", "localhost"}
	default:
		hosts = []string{h}
	}
	var out []endpoint
	for _, h := range hosts {
		out = append(out, endpoint{h, p})
	}
	return out
}

// splitEndpoint reads host:port or [IPv6]:port with a port number.
func splitEndpoint(s string) (endpoint, bool) {
	h, p, err := net.SplitHostPort(strings.TrimSpace(s))
	if err != nil || !validPort(p) || h == "" {
		return endpoint{}, false
	}
	return endpoint{canonHost(h), p}, true
}

func validPort(p string) bool {
	n, err := strconv.ParseUint(p, 10, 16)
	return err == nil && n > 0 && strconv.FormatUint(n, 10) == p
}

// canonHost is a host as endpoints are keyed: normHost, with an address
// in its shortest form (an IPv4-mapped address as IPv4).
func canonHost(h string) string {
	h = normHost(h)
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Unmap().String()
	}
	return h
}

// addHost adds a name, address or CIDR; a name from the config also
// covers the names below it (domain), an inventory name only itself.
func (e *egressList) addHost(s string, domain bool) {
	s = normHost(s)
	if p, err := netip.ParsePrefix(s); err == nil {
		e.prefixes = append(e.prefixes, p.Masked())
		return
	}
	if a, err := netip.ParseAddr(s); err == nil {
		e.prefixes = append(e.prefixes, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
		return
	}
	if rest, ok := strings.CutPrefix(s, "*."); ok {
		e.suffixes = append(e.suffixes, "."+rest)
		return
	}
	e.names[s] = true
	if domain {
		e.suffixes = append(e.suffixes, "."+s)
	}
}

// anyPort reports whether host (a name or an address as written) is
// known on every port. A name that merely looks like an address (127.1,
// 0x7f000001) is not one: only plain addresses are compared with CIDRs.
func (e egressList) anyPort(host string) bool {
	h := normHost(host)
	if h == "" || rootedName(host) {
		return false
	}
	if a, err := netip.ParseAddr(h); err == nil {
		a = a.Unmap()
		for _, p := range e.prefixes {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	if !hostName.MatchString(h) {
		return false
	}
	if e.names[h] {
		return true
	}
	for _, s := range e.suffixes {
		if strings.HasSuffix(h, s) {
			return true
		}
	}
	return false
}

// hostName is a DNS name or single label as network tools read it.
var hostName = regexp.MustCompile(`^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$`)

// rootedName reports a name written with its final dot ("localhost."):
// the resolver skips the hosts file and the search list for it and asks
// DNS, so a name the config knows as a local one (localhost, an
// inventory name) would go out as a query; no such spelling is known.
func rootedName(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasSuffix(s, ".") && !strings.Contains(s, ":")
}

func normHost(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	if !strings.Contains(s, ":") { // not IPv6: a final dot is the root
		s = strings.TrimSuffix(s, ".")
	}
	return s
}

// hostOf finds the host in a destination word, and the port when the
// word names one: a URL (its port, else its scheme's), [user@]host[:port],
// [IPv6]:port, or a bare name or address. ok is false when the word does
// not read plainly as one destination (several "@", a backslash, a
// percent sign, a port that is not a number), which a tool may read
// otherwise than we do.
func hostOf(word string) (host, port string, ok bool) {
	s := word
	if strings.ContainsAny(s, "\\%\t\n ") {
		return "", "", false
	}
	scheme, rest, hasScheme := strings.Cut(s, "://")
	if hasScheme {
		s = rest
		port = schemePorts[strings.ToLower(scheme)]
	}
	if j := strings.IndexAny(s, "/?#"); j >= 0 {
		s = s[:j]
	}
	if strings.Count(s, "@") > 1 {
		return "", "", false
	}
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		s = s[i+1:]
	}
	host, p, ok := splitHostPort(s)
	if p != "" {
		port = p
	}
	return host, port, ok && host != ""
}

// splitHostPort splits host[:port], [IPv6][:port] or a bare IPv6 address.
func splitHostPort(s string) (host, port string, ok bool) {
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", "", false
		}
		host, after := s[1:end], s[end+1:]
		if after == "" {
			return host, "", true
		}
		port, ok := strings.CutPrefix(after, ":")
		return host, port, ok && validPort(port)
	}
	switch strings.Count(s, ":") {
	case 0:
		return s, "", true
	case 1:
		host, port, _ := strings.Cut(s, ":")
		return host, port, validPort(port)
	}
	_, err := netip.ParseAddr(s)
	return s, "", err == nil
}

// schemePorts are the ports URL schemes connect to when a URL names none.
var schemePorts = map[string]string{
	"http": "80", "https": "443", "ftp": "21", "ftps": "990", "ssh": "22", "sftp": "22", "scp": "22", "git": "9418",
	"rsync": "873", "telnet": "23", "redis": "6379", "rediss": "6379", "postgres": "5432", "postgresql": "5432",
	"mysql": "3306", "ldap": "389", "ldaps": "636", "dict": "2628", "gopher": "70", "smtp": "25", "imap": "143",
	"pop3": "110", "mqtt": "1883", "ws": "80", "wss": "443",
}

// sshDestination adds to c when ssh's host and port are not a known
// destination: -p PORT, else the port of an ssh:// URL, else 22.
func (w *walker) sshDestination(c *Command, to arg, p parsed) {
	if !to.static() {
		c.add(Approve, fmt.Sprintf("the ssh destination %s is computed at run time", to.src))
		return
	}
	port := "22"
	if o := p.find("p"); o != nil {
		port = o.value
	}
	if why := w.reach(c, dest{word: to.val, port: port}); why != "" {
		c.add(Approve, why)
	}
}

// egressCheck adds to c when c is a network client whose destination is
// not known, or whose arguments are computed at run time.
func (w *walker) egressCheck(c *Command, args []arg) {
	if fetch, ok := flagFetchers[c.Program]; ok {
		if why := fetch(args); why != "" {
			c.add(Approve, why)
		}
	}
	client, ok := netClients[c.Program]
	if !ok {
		return
	}
	for _, a := range args {
		if !a.static() {
			c.add(Approve, fmt.Sprintf("%s is a network client and its argument %s is computed at run time (%s): what it sends or where cannot be known now", c.Program, a.src, a.kindOr("a glob")))
			return
		}
	}
	dests, why := client(args)
	if why != "" {
		c.add(Approve, why)
	}
	for _, d := range dests {
		if why := w.reach(c, d); why != "" {
			c.add(Approve, why)
		}
	}
}

// onBotHost reports whether c runs on the bot's own host: the target is
// local and no ssh around it took it elsewhere.
func (w *walker) onBotHost(c *Command) bool {
	return w.local() && !slices.ContainsFunc(c.Via, func(v string) bool { return v == "ssh" })
}
