package nsverify

import "testing"

// TestAttemptsFromStrace: the addresses of strace's lines are read, and
// only the ones beyond this machine are egress.
func TestAttemptsFromStrace(t *testing.T) {
	t.Parallel()
	log := `12 connect(3, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("192.0.2.53")}, 16) = -1 ENETUNREACH (Network is unreachable)
12 connect(8, {sa_family=AF_INET, sin_port=htons(80), sin_addr=inet_addr("0.0.0.0")}, 16) = -1 EINPROGRESS (Operation now in progress)
12 connect(4, {sa_family=AF_INET6, sin6_port=htons(22), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "::1", &sin6_addr), sin6_scope_id=0}, 28) = -1 ECONNREFUSED (Connection refused)
13 connect(5, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "2001:db8::1", &sin6_addr), sin6_scope_id=0}, 28 <unfinished ...>
13 <... connect resumed>) = -1 ENETUNREACH (Network is unreachable)
14 sendto(3, ""..., 20, 0, {sa_family=AF_NETLINK, nl_pid=0, nl_groups=00000000}, 12) = 20
14 connect(3, {sa_family=AF_UNIX, sun_path="/var/run/nscd/socket"}, 110) = -1 ENOENT (No such file or directory)
15 sendmsg(6, {msg_name={sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("8.8.8.8")}, msg_namelen=16}, 0) = -1 ENETUNREACH (Network is unreachable)
15 sethostname("pwned", 5) = -1 EPERM (Operation not permitted)
`
	var r Report
	r.addTrace([]byte(log))
	if len(r.Egress) != 3 || r.Egress[0].Addr != "192.0.2.53" || r.Egress[1].Addr != "2001:db8::1" || r.Egress[2].Port != "53" {
		t.Errorf("egress: %v", r.Egress)
	}
	if len(r.Loopback) != 2 {
		t.Errorf("loopback: %v", r.Loopback)
	}
	if len(r.Privileged) != 1 {
		t.Errorf("privileged: %v", r.Privileged)
	}
}
