package policy

import (
	"slices"
	"strings"
	"testing"
)

// Without a sandbox on the bot's host (policy.sandbox: required), what the
// classifier allows there needs approval; other hosts and stricter
// decisions are untouched, and so is the policy it was made from.
func TestWithoutSandboxTurnsLocalAllowIntoApprove(t *testing.T) {
	t.Parallel()
	p := defaultPolicy(t)
	q := p.WithoutSandbox("local", "this kernel has no Landlock")
	tests := []struct {
		host, cmd string
		want      Action
	}{
		{"local", "df -h", Approve},
		{"local", "cat /etc/hostname", Approve},
		{"web-1", "df -h", Allow},
		{"local", "rm -rf /tmp/build", Approve},
		{"local", "rm -rf /", Deny},
	}
	for _, tt := range tests {
		d := q.Check(Target{Host: tt.host}, tt.cmd)
		if d.Action != tt.want {
			t.Errorf("%s on %s: %s (%v), want %s", tt.cmd, tt.host, d.Action, d.Reasons, tt.want)
		}
		if tt.host == "local" && tt.want == Approve && tt.cmd == "df -h" && !strings.Contains(d.Reasons[0], "no Landlock") {
			t.Errorf("the reason does not say why: %v", d.Reasons)
		}
	}
	if d := p.Check(Target{Host: "local"}, "df -h"); d.Action != Allow {
		t.Errorf("the original policy changed: %s", d.Action)
	}
}

func TestSandboxModeIsValidated(t *testing.T) {
	t.Parallel()
	for mode, ok := range map[string]bool{"": true, "required": true, "best_effort": true, "off": false, "Required": false} {
		err := PolicyConfig{Sandbox: mode}.Validate()
		if (err == nil) != ok {
			t.Errorf("sandbox %q: %v", mode, err)
		}
		if err != nil && !strings.Contains(err.Error(), "sandbox: \""+mode+"\" is not a sandbox mode: use required") {
			t.Errorf("sandbox %q: the error does not say what to use: %v", mode, err)
		}
	}
	if m := (PolicyConfig{}).SandboxMode(); m != SandboxRequired {
		t.Errorf("default mode %q, want required", m)
	}
}

// The ports an allowed command's sandbox may connect to are those of the
// destinations it names, and none for a command that is not allowed.
func TestDecisionConnectPorts(t *testing.T) {
	t.Parallel()
	p, err := NewPolicy(PolicyConfig{EgressAllow: []string{"example.com", "localhost:9090"}, KnownServices: []string{"127.0.0.1:8080"}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		cmd  string
		want []uint16
	}{
		{"curl -s http://127.0.0.1:18299/", nil}, // a loopback port of no known service
		{"df -h", nil},
		{"curl -s http://127.0.0.1:8080/healthz", []uint16{8080}},
		{"curl -fsS https://example.com/ localhost:9090/metrics", []uint16{443, 9090}},
		{"curl --url=example.com/x", []uint16{80}},
		{"timeout 5 curl -s HTTPS://example.com:8443/", []uint16{8443}},
		{"dig example.com", []uint16{53}},
		{"rm -rf /tmp/x; curl http://a:1/", nil},       // not allowed
		{"curl -s https://unknown.example:8443/", nil}, // not a known destination
	}
	for _, tt := range tests {
		if got := p.Check(Target{Host: "local"}, tt.cmd).ConnectPorts(); !slices.Equal(got, tt.want) {
			t.Errorf("%s: ports %v, want %v", tt.cmd, got, tt.want)
		}
	}
}

func TestRemoteSandboxModeIsValidated(t *testing.T) {
	t.Parallel()
	for mode, ok := range map[string]bool{"": true, "required": true, "best_effort": true, "off": false, "none": false} {
		err := PolicyConfig{RemoteSandbox: mode}.Validate()
		if (err == nil) != ok {
			t.Errorf("remote_sandbox %q: %v", mode, err)
		}
		if err != nil && !strings.Contains(err.Error(), "remote_sandbox: \""+mode+"\" is not a sandbox mode: use required") {
			t.Errorf("remote_sandbox %q: the error does not say what to use: %v", mode, err)
		}
	}
	if m := (PolicyConfig{}).RemoteSandboxMode(); m != SandboxRequired {
		t.Errorf("default mode %q, want required", m)
	}
}
