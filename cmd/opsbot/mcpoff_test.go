package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// With MCP servers configured and no model, the start log says the
// servers are not started (a new user saw nothing: no line, nothing in
// /readyz, no process).
func TestMCPServersWithoutAModelAreSaidNotStarted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	yaml := "web:\n  listen: 127.0.0.1:0\nstore:\n  path: " + filepath.Join(dir, "opsbot.db") + "\nbot:\n  data_dir: " + filepath.Join(dir, "data") +
		"\nmcp:\n  servers:\n    tiny:\n      type: stdio\n      command: /bin/true\n"
	_, logs := startBotYAML(t, dir, yaml)
	if s := logs.String(); !strings.Contains(s, "the MCP servers of mcp.servers give the agent tools, so they are not started either") {
		t.Errorf("the start log does not say the MCP servers are not started:\n%s", s)
	}
}
