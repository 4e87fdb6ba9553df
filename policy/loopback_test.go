package policy

import (
	"strings"
	"testing"
)

// TestLoopbackEgress: on loopback only the ports of services opsbot knows
// are known destinations: its own (KnownServices, on the bot's host only)
// and the host:port entries of policy.egress_allow (on every host). Any
// other local port needs approval, with a reason that says how to allow
// it; checks that send nothing to a port (ping, a name asked of DNS)
// stay allowed.
func TestLoopbackEgress(t *testing.T) {
	t.Parallel()
	p, err := NewPolicy(PolicyConfig{
		EgressAllow: []string{"127.0.0.1:9100", "localhost:5432", "[::1]:6379"},
		// An inventory host on loopback is known on its SSH port; loopback
		// without a port opens nothing.
		KnownHosts:    []string{"web-1", "127.0.0.1", "localhost", "127.0.0.1:2222"},
		KnownServices: []string{"127.0.0.1:8080"}, // opsbot's web listener
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		host, cmd string
		want      Action
		reason    string // a part of the reasons, when not allowed
	}{
		{"local", "curl -s http://127.0.0.1:8080/healthz", Allow, ""}, // opsbot's own listener
		{"local", "curl -s http://localhost:8080/readyz", Allow, ""},
		{"local", "nc -z 127.0.0.1 8080", Allow, ""},
		{"local", "nc -z 127.0.0.1 2222", Allow, ""}, // an inventory host's SSH port on loopback
		{"local", "curl -s http://127.0.0.1:9100/metrics", Allow, ""},
		{"local", "pg_isready -h localhost", Allow, ""},
		{"local", "redis-cli -h ::1 ping", Allow, ""},
		{"local", "ping -c 1 127.0.0.1", Allow, ""},
		{"local", "ping -c 1 ::1", Allow, ""},
		{"local", "dig +short localhost", Allow, ""},
		{"local", "getent hosts localhost", Allow, ""},
		{"local", "traceroute -n 127.0.0.1", Allow, ""},
		{"web-1", "curl -s http://127.0.0.1:9100/metrics", Allow, ""}, // egress_allow: on every host
		{"web-1", "pg_isready -h localhost -p 5432", Allow, ""},
		{"local", `curl -s "http://127.0.0.1:18299/collect?d=TOPSECRET"`, Approve,
			`curl connects to 127.0.0.1:18299 on the bot's host, which is not a known destination (a local port may be a proxy or tunnel that forwards anywhere); if it is a local service, add "127.0.0.1:18299" to policy.egress_allow`},
		{"web-1", "nc -z 127.0.0.1 2222", Approve, "on web-1"},
		{"local", "nc -z 127.0.0.1 22", Approve, `add "127.0.0.1:22"`},
		{"web-1", "curl -s http://127.0.0.1:8080/healthz", Approve, // not opsbot's listener there
			`curl connects to 127.0.0.1:8080 on web-1, which is not a known destination`},
		{"local", "ssh web-1 curl -s http://127.0.0.1:8080/", Approve, "on the host ssh reaches"},
		{"local", "curl -s http://127.0.0.1:9101/", Approve, `add "127.0.0.1:9101" to policy.egress_allow`},
		{"local", "curl -s http://localhost:9100/", Approve, `add "localhost:9100"`}, // listed as 127.0.0.1 only
		{"local", "curl -s http://127.0.0.1/", Approve, `127.0.0.1:80`},
		{"local", "curl -s 'http://[::1]:18299/'", Approve, `add "[::1]:18299"`},
		{"local", "nc -z 127.0.0.1 8000-9000", Approve, `on a port the policy cannot tell`},
		{"local", "openssl s_client -brief", Approve, `localhost:4433`},
		{"local", "dig @127.0.0.1 -p 18299 web-1", Approve, `127.0.0.1:18299`},
		{"local", "curl -s http://2130706433:8080/", Approve, `2130706433, the address 127.0.0.1 written another way`},
		{"local", "curl -s http://0x7f000001:8080/", Approve, `the address 127.0.0.1 written another way`},
	}
	for _, tt := range tests {
		d := p.Check(Target{Host: tt.host}, tt.cmd)
		got := strings.Join(d.Reasons, "\n")
		if d.Action != tt.want || (tt.reason != "" && !strings.Contains(got, tt.reason)) {
			t.Errorf("on %s: %q: %s, want %s with %q\n  %s", tt.host, tt.cmd, d.Action, tt.want, tt.reason, strings.ReplaceAll(got, "\n", "\n  "))
		}
	}
}

// TestLoopbackByName: an operator who lists a loopback host without a
// port opens every port of it, as asked.
func TestLoopbackByName(t *testing.T) {
	t.Parallel()
	p, err := NewPolicy(PolicyConfig{EgressAllow: []string{"localhost"}})
	if err != nil {
		t.Fatal(err)
	}
	if d := p.Check(Target{Host: "local"}, "curl -s http://localhost:18299/"); d.Action != Allow {
		t.Errorf("localhost listed: %s, want allow\n  %s", d.Action, strings.Join(d.Reasons, "\n  "))
	}
	if d := p.Check(Target{Host: "local"}, "curl -s http://127.0.0.1:18299/"); d.Action != Approve {
		t.Errorf("127.0.0.1 not listed: %s, want approve", d.Action)
	}
}

// TestListenerEndpoints: a listener is known on each loopback spelling
// that reaches it.
func TestListenerEndpoints(t *testing.T) {
	t.Parallel()
	for listen, want := range map[string]string{
		":8080":          "127.0.0.1:8080 [::1]:8080 localhost:8080",
		"0.0.0.0:8080":   "127.0.0.1:8080 localhost:8080",
		"[::]:8080":      "127.0.0.1:8080 [::1]:8080 localhost:8080",
		"127.0.0.1:8080": "127.0.0.1:8080 localhost:8080",
		"[::1]:8080":     "[::1]:8080 localhost:8080",
		"10.0.0.7:8080":  "10.0.0.7:8080",
		"127.0.0.1:0":    "",
	} {
		var got []string
		for _, ep := range listenerEndpoints(listen) {
			got = append(got, ep.String())
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%s: %v, want %s", listen, got, want)
		}
	}
}

func TestInetAton(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"2130706433": "127.0.0.1", "0x7f000001": "127.0.0.1", "0177.0.0.1": "127.0.0.1", "127.1": "127.0.0.1",
		"0x7f.1": "127.0.0.1", "127.0.1": "127.0.0.1", "0": "0.0.0.0", "10.0.0.5": "10.0.0.5", "0X7F.0.0.01": "127.0.0.1",
	} {
		if a, ok := inetAton(in); !ok || a.String() != want {
			t.Errorf("inetAton(%q) = %v, %v; want %s", in, a, ok, want)
		}
	}
	for _, in := range []string{"web-1", "256.0.0.1", "1.2.3.4.5", "08.0.0.1", "0x", "1..2", "", "4294967296", "1_0", "-1"} {
		if a, ok := inetAton(in); ok {
			t.Errorf("inetAton(%q) = %v, want not an address", in, a)
		}
	}
}

func TestEgressAllowPortsValidate(t *testing.T) {
	t.Parallel()
	ok := []string{"127.0.0.1:9100", "localhost:5432", "[::1]:6379", "metrics.example:9100"}
	if err := (PolicyConfig{EgressAllow: ok}).Validate(); err != nil {
		t.Errorf("%v: %v", ok, err)
	}
	for _, bad := range []string{"localhost:0", "localhost:99999", "localhost:http", "::1:80x"} {
		if err := (PolicyConfig{EgressAllow: []string{bad}}).Validate(); err == nil || !strings.Contains(err.Error(), "host:port") {
			t.Errorf("%q: %v, want an error naming host:port", bad, err)
		}
	}
}
