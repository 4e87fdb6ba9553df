package approvals

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"
)

// egressList is where network clients may connect without a person:
// loopback, the inventory's hosts and addresses, and policy.egress_allow
// (names, *.domains, addresses and CIDRs).
type egressList struct {
	names    map[string]bool // exact host names, lower case, without a final dot
	suffixes []string        // ".example.com": any name below it
	prefixes []netip.Prefix
}

// loopbackNames resolve to this machine without asking a DNS server.
var loopbackNames = []string{"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}

func newEgressList(allow, known []string) egressList {
	e := egressList{names: map[string]bool{}}
	for _, n := range loopbackNames {
		e.names[n] = true
	}
	e.prefixes = append(e.prefixes, netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128"))
	for _, k := range known {
		e.addHost(k, false)
	}
	for _, a := range allow {
		e.addHost(a, true)
	}
	return e
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

// allows reports whether host (a name or an address as written) is a
// known destination. A name that merely looks like an address (127.1,
// 0x7f000001) is not one: only plain addresses are compared with CIDRs.
func (e egressList) allows(host string) bool {
	h := normHost(host)
	if h == "" {
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

func normHost(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	if !strings.Contains(s, ":") { // not IPv6: a final dot is the root
		s = strings.TrimSuffix(s, ".")
	}
	return s
}

// hostOf finds the host in a destination word: a URL, [user@]host[:port],
// [IPv6]:port, or a bare name or address. ok is false when the word does
// not read plainly as one destination (several "@", a backslash, a
// percent sign), which a tool may read otherwise than we do.
func hostOf(word string) (host string, ok bool) {
	s := word
	if strings.ContainsAny(s, "\\%\t\n ") {
		return "", false
	}
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
		if j := strings.IndexAny(s, "/?#"); j >= 0 {
			s = s[:j]
		}
	}
	if strings.Count(s, "@") > 1 {
		return "", false
	}
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		s = s[i+1:]
	}
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", false
		}
		return s[1:end], true
	}
	if strings.Count(s, ":") == 1 {
		s, _, _ = strings.Cut(s, ":")
	} else if strings.Count(s, ":") > 1 {
		if _, err := netip.ParseAddr(s); err != nil {
			return "", false
		}
	}
	if j := strings.IndexAny(s, "/?#"); j >= 0 {
		s = s[:j]
	}
	return s, s != ""
}

// sshDestination adds to c when ssh's host is not a known destination.
func (w *walker) sshDestination(c *Command, dest arg) {
	if !dest.static() {
		c.add(Approve, fmt.Sprintf("the ssh destination %s is computed at run time", dest.src))
		return
	}
	if host, ok := hostOf(dest.val); !ok || !w.policy.egress.allows(host) {
		c.add(Approve, fmt.Sprintf("ssh reaches %s, which is not a known destination (loopback, the inventory, policy.egress_allow)", dest.val))
	}
}

// egressCheck adds to c when c is a network client whose destination is
// not known, or whose arguments are computed at run time.
func (w *walker) egressCheck(c *Command, args []arg) {
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
		host, ok := hostOf(d)
		switch {
		case !ok:
			c.add(Approve, fmt.Sprintf("%s connects to %s, which does not read plainly as one host", c.Program, d))
		case !w.policy.egress.allows(host):
			c.add(Approve, fmt.Sprintf("%s reaches %s, which is not a known destination (loopback, the inventory, policy.egress_allow)", c.Program, host))
		}
	}
}
