package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigCheckSaysWhenAnMCPCommandCannotStart: a stdio server whose
// command is missing, not executable, or not on PATH draws a warning with
// what to do; one that can start draws none.
func TestConfigCheckSaysWhenAnMCPCommandCannotStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plain, runnable := filepath.Join(dir, "plain.py"), filepath.Join(dir, "server")
	if err := os.WriteFile(plain, []byte("print()\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(runnable, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	yaml := "mcp:\n  servers:\n" +
		"    gone:\n      type: stdio\n      command: " + filepath.Join(dir, "nope") + "\n" +
		"    plain:\n      type: stdio\n      command: " + plain + "\n" +
		"    bare:\n      type: stdio\n      command: opsbot-no-such-mcp-server\n" +
		"    good:\n      type: stdio\n      command: " + runnable + "\n" +
		"    onpath:\n      type: stdio\n      command: sh\n"
	cfg, errs := decodeConfig("c.yaml", []byte(yaml), env(nil))
	if cfg == nil {
		t.Fatalf("not decoded: %v", errs)
	}
	var got []string
	for _, w := range cfg.warnings() {
		got = append(got, w.Error())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		`mcp.servers.gone.command: warning: "` + filepath.Join(dir, "nope") + `" does not exist: install it there, or correct the path; until it is, this server stays down`,
		`mcp.servers.plain.command: warning: "` + plain + `" is not executable: make it so (chmod +x ` + plain + `)`,
		`mcp.servers.bare.command: warning: "opsbot-no-such-mcp-server" is not found on opsbot's PATH: install it, or give its full path`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings:\n%s\nwant one saying %q", all, want)
		}
	}
	if strings.Contains(all, "servers.good") || strings.Contains(all, "servers.onpath") {
		t.Errorf("a command that can start is warned about:\n%s", all)
	}
}
