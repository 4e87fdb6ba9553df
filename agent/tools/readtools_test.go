package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/executor"
	"github.com/opsbot/opsbot/policy"
)

// realGuard is the guard of a deployment with the default policy, on this
// machine's own host through the real executor (allowed commands run in
// the sandbox), asking ap.
func realGuard(t *testing.T, ap approvals.Approver, egress ...string) *approvals.Guard {
	t.Helper()
	pol, err := policy.NewPolicy(policy.PolicyConfig{EgressAllow: egress})
	if err != nil {
		t.Fatal(err)
	}
	fleet, err := hosts.NewFleet(hosts.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fleet.Close() })
	return &approvals.Guard{Policy: approvals.FleetPolicy{Policy: pol, Inventory: fleet.Inventory}, Approver: ap, Exec: &executor.Fleet{Fleet: fleet}}
}

// call is a tool call of name with input, its events dropped.
func call(name, input string) agent.ToolCall {
	return agent.ToolCall{ID: "c1", Name: name, Input: []byte(input), Emit: func(agent.Event) {}}
}

// jsonInput renders a tool input from key, value pairs.
func jsonInput(kv ...any) string {
	var parts []string
	for i := 0; i+1 < len(kv); i += 2 {
		parts = append(parts, fmt.Sprintf("%q:%s", kv[i], jsonValue(kv[i+1])))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func jsonValue(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(v)
}

// read_file reads the lines asked for, and only those, in the sandbox.
func TestReadFileReadsTheLinesAsked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var b strings.Builder
	for i := 1; i <= 500; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	path := filepath.Join(dir, "app.log")
	os.WriteFile(path, []byte(b.String()), 0o644)
	tool := &ReadFile{Guard: realGuard(t, &fakeApprover{})}
	in := call("read_file", jsonInput("host", hosts.LocalHost, "path", path, "offset", 100, "limit", 3))
	if !tool.Concurrent(in) {
		t.Error("reading a log asks a person")
	}
	res := tool.Call(context.Background(), in)
	if res.IsError || !strings.Contains(res.Content, "\nline 100\nline 101\nline 102\n</output>") || strings.Contains(res.Content, "line 99\n") {
		t.Errorf("read_file offset 100 limit 3 = %q", res.Content)
	}
}

// grep finds the matching lines with their context and line numbers.
func TestGrepGivesMatchesWithContext(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "app.log"), []byte("a\nb\nERROR disk full\nc\nd\n"), 0o644)
	tool := &Grep{Guard: realGuard(t, &fakeApprover{})}
	res := tool.Call(context.Background(), call("grep", jsonInput("host", hosts.LocalHost, "pattern", "ERROR|FATAL", "path", dir, "context", 1)))
	want := filepath.Join(dir, "app.log") + "-2-b\n" + filepath.Join(dir, "app.log") + ":3:ERROR disk full\n" + filepath.Join(dir, "app.log") + "-4-c\n"
	if res.IsError || !strings.Contains(res.Content, want) || strings.Contains(res.Content, "-1-a") {
		t.Errorf("grep = %q; want %q", res.Content, want)
	}
}

// What the model passes as a path, a pattern, a unit or a time is one
// word to the command, never shell code or another option: none of these
// creates the canary file, and each still runs without a person.
func TestReadToolsQuoteHostileInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	canary := filepath.Join(dir, "pwned")
	touch := "touch " + canary
	hostile := []string{"x'; " + touch + "; '", "$(" + touch + ")", "`" + touch + "`", "x\n" + touch, "x && " + touch, "x | " + touch}
	guard := &approvals.Guard{Policy: allowAll{}, Exec: &shellExec{}}
	for _, h := range hostile {
		for _, c := range []struct {
			tool  agent.Tool
			input string
		}{
			{&ReadFile{Guard: guard}, jsonInput("host", "local", "path", h)},
			{&Grep{Guard: guard}, jsonInput("host", "local", "pattern", h, "path", dir)},
			{&Grep{Guard: guard}, jsonInput("host", "local", "pattern", "x", "path", h)},
			{&Grep{Guard: guard}, jsonInput("host", "local", "pattern", "-f /etc/passwd", "path", dir)},
			{&Journal{Guard: guard}, jsonInput("host", "local", "unit", h)},
			{&Journal{Guard: guard}, jsonInput("host", "local", "since", h)},
			{&Journal{Guard: guard}, jsonInput("host", "local", "unit", "--file=/etc/shadow")},
		} {
			c.tool.Call(context.Background(), call(c.tool.Spec().Name, c.input))
			if _, err := os.Stat(canary); err == nil {
				t.Fatalf("%s with %s ran the model's shell code", c.tool.Spec().Name, c.input)
			}
		}
	}
	res := (&Journal{Guard: guard}).Call(context.Background(), call("journal", jsonInput("host", "local", "priority", "err; "+touch)))
	if !res.IsError || !strings.Contains(res.Content, "is not one of") {
		t.Errorf("a bad priority = %q", res.Content)
	}
}

// allowAll lets every command run: what runs is then only what the tool
// built.
type allowAll struct{}

func (allowAll) Check(string, string) approvals.HostDecision {
	return approvals.HostDecision{Action: policy.Allow}
}

// read_file of a file that holds credentials waits for a person, as
// run_command's cat would: denied, the secret is not read.
func TestReadToolsKeepSecretsBehindApproval(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secret := filepath.Join(dir, "svc.keytab")
	os.WriteFile(secret, []byte("keytab body 4242\n"), 0o600)
	ap := &fakeApprover{answer: approvals.Outcome{State: "denied", DecidedBy: "bob"}}
	guard := realGuard(t, ap)
	var cards []agent.Event
	in := call("read_file", jsonInput("host", hosts.LocalHost, "path", secret))
	in.Emit = func(ev agent.Event) {
		if ev.Kind == agent.ApprovalPending {
			cards = append(cards, ev)
		}
	}
	read := &ReadFile{Guard: guard}
	if read.Concurrent(in) {
		t.Error("reading a secret file is said to ask no one")
	}
	res := read.Call(context.Background(), in)
	if strings.Contains(res.Content, "keytab body 4242") || len(cards) != 1 || !strings.Contains(res.Content, "denied") {
		t.Errorf("read_file of a secret: %q, %d cards; want a card, denied, no secret", res.Content, len(cards))
	}
}
