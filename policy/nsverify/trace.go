package nsverify

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"
)

// privileged are the traced calls that change the machine rather than a
// file; ns.sh traces them and the network calls, nothing else.
var privileged = map[string]bool{
	"mount": true, "umount2": true, "pivot_root": true, "fsopen": true, "fsmount": true,
	"move_mount": true, "open_tree": true, "swapon": true, "swapoff": true, "reboot": true,
	"init_module": true, "finit_module": true, "delete_module": true, "kexec_load": true,
	"kexec_file_load": true, "clock_settime": true, "settimeofday": true, "clock_adjtime": true,
	"sethostname": true, "setdomainname": true, "acct": true,
}

// netCalls are the calls that carry an address out.
var netCalls = map[string]bool{"connect": true, "sendto": true, "sendmsg": true, "sendmmsg": true}

// call is one line of strace -f output: "PID name(args) = result", or the
// first half of a call another process interrupted ("… <unfinished ...>").
type call struct {
	name string
	text string // the line without its pid
}

var callLine = regexp.MustCompile(`^(?:\d+\s+)?([a-z_0-9]+)\(`)

func parseCall(line string) (call, bool) {
	line = strings.TrimSpace(line)
	m := callLine.FindStringSubmatchIndex(line)
	if m == nil {
		return call{}, false
	}
	return call{name: line[m[2]:m[3]], text: line[m[2]:]}, true
}

func (c call) netAttempt() bool { return netCalls[c.name] }

// Attempt is one address a network call was aimed at.
type Attempt struct {
	Call   string // connect, sendto, sendmsg or sendmmsg
	Family string // AF_INET, AF_INET6, AF_PACKET…
	Addr   string // the IP address, when the family has one
	Port   string
	Line   string // strace's line, for the report
}

// String is "connect AF_INET 192.0.2.53:53".
func (a Attempt) String() string {
	return fmt.Sprintf("%s %s %s:%s (%s)", a.Call, a.Family, a.Addr, a.Port, a.Line)
}

// loopback reports whether a is aimed at this machine: 127.0.0.0/8 or ::1
// (also as ::ffff:127.x), or 0.0.0.0 or ::, which Linux connects to the
// local host (curl 0 reaches 0.0.0.0:80; the fuzzer found it).
func (a Attempt) loopback() bool {
	ip, err := netip.ParseAddr(a.Addr)
	return err == nil && (ip.Unmap().IsLoopback() || ip.IsUnspecified())
}

var (
	sockaddr = regexp.MustCompile(`\{sa_family=(AF_[A-Z0-9_]+)([^{}]*)\}`)
	inetAddr = regexp.MustCompile(`inet_addr\("([^"]*)"\)|inet_pton\(AF_INET6?, "([^"]*)"`)
	port     = regexp.MustCompile(`sin6?_port=htons\((\d+)\)`)
)

// attempts are the addresses in c's arguments, leaving out the local
// families: netlink (ip, ss and hostname -I ask the kernel; the network
// namespace comparison catches what they change) and AF_UNIX (no daemon
// socket exists in the scratch root).
func (c call) attempts() []Attempt {
	var out []Attempt
	for _, m := range sockaddr.FindAllStringSubmatch(c.text, -1) {
		family, body := m[1], m[2]
		if family == "AF_UNIX" || family == "AF_UNSPEC" || family == "AF_NETLINK" {
			continue
		}
		a := Attempt{Call: c.name, Family: family, Line: c.text}
		if ip := inetAddr.FindStringSubmatch(body); ip != nil {
			a.Addr = ip[1] + ip[2]
		}
		if p := port.FindStringSubmatch(body); p != nil {
			a.Port = p[1]
		}
		out = append(out, a)
	}
	return out
}
