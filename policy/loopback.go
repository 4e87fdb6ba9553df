package policy

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// dest is one place a network client reaches: a destination word for
// hostOf and the port the client uses there when the word names none
// ("" when the policy cannot tell). A portless dest reaches no service on
// its host: a name asked of a DNS server, or an echo the kernel answers.
type dest struct {
	word     string
	port     string
	portless bool
}

// isLoopback reports whether a host (normHost) is this machine: a
// loopback name (and the names below "localhost", which resolvers map to
// loopback), a loopback address, or the unspecified address, which Linux
// connects to this machine too.
func isLoopback(h string) bool {
	for _, n := range loopbackNames {
		if h == n {
			return true
		}
	}
	if strings.HasSuffix(h, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(h)
	if err != nil {
		return false
	}
	a = a.Unmap()
	return a.IsLoopback() || a.IsUnspecified()
}

// reach says why c may not reach d without a person, or "" when d is a
// known destination.
func (w *walker) reach(c *Command, d dest) string {
	host, port, ok := hostOf(d.word)
	if !ok {
		return fmt.Sprintf("%s connects to %s, which does not read plainly as one host", c.Program, d.word)
	}
	if rootedName(host) {
		return fmt.Sprintf("%s reaches %s, a name written with its final dot, which the resolver sends to DNS rather than the hosts file: write it without the dot", c.Program, host)
	}
	if port == "" {
		port = d.port
	}
	e := w.policy.egress
	h := normHost(host)
	if e.anyPort(h) {
		return ""
	}
	if !isLoopback(h) {
		if port != "" && e.endpoints[endpoint{canonHost(h), port}] {
			return ""
		}
		if a, ok := inetAton(h); ok && !isAddr(h) {
			return fmt.Sprintf("%s reaches %s, the address %s written another way, which is not a known destination: write the address plainly", c.Program, host, a)
		}
		return fmt.Sprintf("%s reaches %s, which is not a known destination (the inventory, policy.egress_allow)", c.Program, host)
	}
	return w.reachLoopback(c, h, port, d.portless)
}

// reachLoopback judges a destination on this machine's loopback (the
// bot's host, or the remote host a command runs on): only the ports of
// services opsbot knows are known destinations there.
func (w *walker) reachLoopback(c *Command, h, port string, portless bool) string {
	if port == "" && portless {
		return "" // a name asked of DNS, an echo: no service reads it
	}
	where := "the bot's host"
	if !w.onBotHost(c) {
		where = w.target.Host
		if w.local() {
			where = "the host ssh reaches"
		}
	}
	if port == "" {
		return fmt.Sprintf("%s connects to %s on %s on a port the policy cannot tell, and only the loopback ports of known services are known destinations "+
			"(a local port may be a proxy or tunnel that forwards anywhere); name the port, and if it is a local service, add \"%s\" to policy.egress_allow",
			c.Program, h, where, endpoint{canonHost(h), "PORT"})
	}
	ep := endpoint{canonHost(h), port}
	if w.policy.egress.endpoints[ep] || (w.onBotHost(c) && w.policy.egress.botHost[ep]) {
		return ""
	}
	return fmt.Sprintf("%s connects to %s on %s, which is not a known destination (a local port may be a proxy or tunnel that forwards anywhere); "+
		"if it is a local service, add \"%s\" to policy.egress_allow", c.Program, ep, where, ep)
}

// LoopbackServices are the loopback host:port a command on t may reach
// without a person (on the bot's host: opsbot's own listeners and
// inventory hosts on loopback; everywhere: the host:port entries of
// policy.egress_allow on loopback), sorted, for `opsbot policy check`.
func (p *Policy) LoopbackServices(t Target) []string {
	var out []string
	add := func(eps map[endpoint]bool) {
		for ep := range eps {
			if isLoopback(ep.host) {
				out = append(out, ep.String())
			}
		}
	}
	add(p.egress.endpoints)
	if t.Host == localHostName {
		add(p.egress.botHost)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// inetAton reads an IPv4 address as inet_aton(3) does, and so as curl,
// ping and most tools resolve a host name: one to four parts, each
// decimal, octal (leading 0) or hexadecimal (0x), the last filling the
// remaining bytes (127.1, 2130706433, 0x7f000001, 0177.0.0.1).
func inetAton(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var nums []uint64
	for _, p := range parts {
		n, ok := atonPart(p)
		if !ok {
			return netip.Addr{}, false
		}
		nums = append(nums, n)
	}
	var v uint64
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, false
		}
		v |= n << (8 * (3 - i))
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, false
	}
	v |= last
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// atonPart reads one part of an inet_aton address: 0x hexadecimal, a
// leading 0 octal, else decimal.
func atonPart(p string) (uint64, bool) {
	base := 10
	switch {
	case len(p) > 2 && (p[:2] == "0x" || p[:2] == "0X"):
		p, base = p[2:], 16
	case len(p) > 1 && p[0] == '0':
		p, base = p[1:], 8
	}
	n, err := strconv.ParseUint(p, base, 32)
	return n, err == nil && !strings.ContainsAny(p, "+-_")
}

func isAddr(h string) bool {
	_, err := netip.ParseAddr(h)
	return err == nil
}
