package hosts

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"syscall"
)

// Reason says why a command could not run on a host, in a person's words:
// the class of failure (refused, unreachable, no answer, unknown name,
// authentication, host key, lost connection) without the Go error chain
// that carried it ("hosts: web-1: connect: dial tcp 10.0.0.9:22: …").
func Reason(err error) string {
	var hk *HostKeyError
	var dns *net.DNSError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &hk):
		return "its host key is not the one known_hosts expects (" + errors.Unwrap(hk).Error() + "); see the log for the fix"
	case errors.As(err, &dns):
		return "its name does not resolve (" + dns.Name + ")"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "nothing answers on its SSH port (connection refused)"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "the host is unreachable from here (no route)"
	case errors.Is(err, context.Canceled):
		return "stopped before it could run"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded), isTimeout(err):
		return "the host did not answer in time (ssh.connect_timeout)"
	}
	msg := err.Error()
	if say, ok := reasonInText(msg); ok {
		return say
	}
	return tidy(msg)
}

// tidy is an error of no known class without the package and host
// prefixes its wrapping added ("hosts: web-1: "): the rest is the
// sentence the failing part wrote.
func tidy(msg string) string {
	msg = strings.TrimPrefix(msg, "hosts: ")
	if name, rest, ok := strings.Cut(msg, ": "); ok && !strings.ContainsAny(name, " \t") {
		msg = rest
	}
	return msg
}

// ReasonText is Reason for an error kept as text (the agent's records):
// a known class in words, else the text's first line.
func ReasonText(msg string) string {
	if say, ok := reasonInText(msg); ok {
		return say
	}
	first, _, _ := strings.Cut(msg, "\n")
	return first
}

// reasonInText recognises the failures whose type a text no longer has.
func reasonInText(msg string) (string, bool) {
	for _, c := range []struct{ in, say string }{
		{"connection refused", "nothing answers on its SSH port (connection refused)"},
		{"no route to host", "the host is unreachable from here (no route)"},
		{"network is unreachable", "the host is unreachable from here (no route)"},
		{"no such host", "its name does not resolve"},
		{"i/o timeout", "the host did not answer in time (ssh.connect_timeout)"},
		{"ssh handshake: timed out", "the host did not answer in time (ssh.connect_timeout)"},
		{"authentication as", authReason(msg)},
		{"connection lost while the command ran", "the connection was lost while the command ran (on the host it stops at its own deadline)"},
		{"connection presumed lost", "the host stopped answering while the command ran; the command was killed"},
		{"bash is required", "bash is missing on the host (commands run with bash -c)"},
		{"no SSH hosts are configured", "no SSH hosts are configured"},
		// Something answered on the port and hung up before SSH began: a
		// server that is not sshd, or sshd refusing this client early.
		{"connection reset by peer", hungUp},
		{"handshake failed: EOF", hungUp},
	} {
		if strings.Contains(msg, c.in) {
			return c.say, true
		}
	}
	return "", false
}

const hungUp = "the host closed the connection before SSH began: is an SSH server listening at its address, and does it accept this client?"

// authReason keeps the advice of an authentication failure, not its chain.
func authReason(msg string) string {
	i := strings.Index(msg, "authentication as")
	if i < 0 {
		return ""
	}
	s := msg[i:]
	if j := strings.Index(s, "authorized_keys"); j >= 0 {
		s = s[:j+len("authorized_keys")]
	}
	return s
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
