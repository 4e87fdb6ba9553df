package main

import (
	"strings"
	"testing"
)

// An unknown host or group at the terminal names the command as it is
// typed there, 'opsbot hosts list', not the chat's "hosts command".
func TestNuUnknownHostNamesTheCommandAsTyped(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"hosts", "exec", "--data-dir", "", "nosuch", "--", "true"},
		{"hosts", "list", "group:nosuch"},
		{"hosts", "ping", "nosuch"},
	} {
		code, _, stderr := runOpsbot(t, args...)
		if code != 2 || !strings.Contains(stderr, "'opsbot hosts list'") || strings.Contains(stderr, "hosts command") {
			t.Errorf("%s: exit %d, stderr %q; want 2, naming 'opsbot hosts list'", args, code, stderr)
		}
	}
}
