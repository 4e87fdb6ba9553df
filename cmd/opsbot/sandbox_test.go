package main

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/policy"
)

// A kernel without Landlock (simulated by the probe): under required, what
// the classifier allows on the bot's host needs approval, and /readyz and
// the log say so; under best_effort it stays allowed and the local runner
// runs it unconfined. With Landlock nothing changes.
func TestSandboxFallback(t *testing.T) {
	t.Parallel()
	noLandlock := func() error { return errors.New("this kernel has no Landlock") }
	haveLandlock := func() error { return nil }
	tests := []struct {
		mode       string
		probe      func() error
		want       policy.Action
		bestEffort bool
		detail     string
	}{
		{"", noLandlock, policy.Approve, false, "wait for approval instead"},
		{"required", noLandlock, policy.Approve, false, "wait for approval instead"},
		{"best_effort", noLandlock, policy.Allow, true, "run WITHOUT it"},
		{"required", haveLandlock, policy.Allow, false, "confined by Landlock"},
		{"best_effort", haveLandlock, policy.Allow, false, "confined by Landlock"},
	}
	for _, tt := range tests {
		cfg := policy.PolicyConfig{Sandbox: tt.mode}
		pol, err := policy.NewPolicy(cfg)
		if err != nil {
			t.Fatal(err)
		}
		local := &hosts.Local{}
		s := newSandboxState(cfg, tt.probe, haveLandlock)
		pol = s.apply(pol, local)
		if d := pol.Check(policy.Target{Host: hosts.LocalHost}, "df -h"); d.Action != tt.want {
			t.Errorf("%q: df -h on local is %s, want %s", tt.mode, d.Action, tt.want)
		}
		if d := pol.Check(policy.Target{Host: "web-1"}, "df -h"); d.Action != policy.Allow {
			t.Errorf("%q: df -h on an SSH host is %s, want allow", tt.mode, d.Action)
		}
		if local.SandboxBestEffort != tt.bestEffort {
			t.Errorf("%q: SandboxBestEffort %v", tt.mode, local.SandboxBestEffort)
		}
		ok, detail := s.status()
		if ok != (tt.probe() == nil) || !strings.Contains(detail, tt.detail) {
			t.Errorf("%q: status %v %q, want %q", tt.mode, ok, detail, tt.detail)
		}
	}
}

// `opsbot config check` names the key and the values it takes.
func TestConfigRefusesAnUnknownSandboxMode(t *testing.T) {
	t.Parallel()
	_, err := parseConfig("bad.yaml", []byte("policy:\n  sandbox: off\n"), env(map[string]string{}))
	if err == nil || !strings.Contains(err.Error(), "bad.yaml:2:") || !strings.Contains(err.Error(), "policy.sandbox") ||
		!strings.Contains(err.Error(), "use required") {
		t.Errorf("error %v; want bad.yaml:2, policy.sandbox and the values to use", err)
	}
}

// At start, a missing sandbox is one WARN line that says what happens
// instead, and so is one without its mount namespace (it says what that
// leaves open); a whole one is one INFO line.
func TestSandboxStartLine(t *testing.T) {
	t.Parallel()
	ok := func() error { return nil }
	noLandlock := func() error { return errors.New("this kernel has no Landlock") }
	noUserNS := func() error { return errors.New("unprivileged user namespaces are off") }
	for _, tt := range []struct {
		probe, isolation func() error
		level, want      string
	}{
		{noLandlock, ok, "level=WARN", "wait for approval instead"},
		{ok, noUserNS, "level=WARN", "WITHOUT a mount namespace (unprivileged user namespaces are off): secret paths are not masked"},
		{ok, ok, "level=INFO", "confined by Landlock and a mount namespace"},
	} {
		var buf bytes.Buffer
		log := slog.New(slog.NewTextHandler(&buf, nil))
		newSandboxState(policy.PolicyConfig{}, tt.probe, tt.isolation).logStart(log)
		if got := buf.String(); strings.Count(got, "\n") != 1 || !strings.Contains(got, tt.level) || !strings.Contains(got, tt.want) {
			t.Errorf("the start line is %q; want %s with %q", got, tt.level, tt.want)
		}
	}
}
