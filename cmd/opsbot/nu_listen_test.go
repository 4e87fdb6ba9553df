package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A bad listen address ends opsbot run with a sentence saying what to
// type, never Go's error tail ("missing port in address") or a config
// key the person who typed a flag never saw.
func TestNuBadListenAddressSaysWhatToType(t *testing.T) {
	t.Parallel()
	keyed := filepath.Join(t.TempDir(), "keyed.yaml")
	os.WriteFile(keyed, []byte("web:\n  listen: 127.0.0.1:0\n  api_key: k-0123456789abcdef\n"), 0o600)
	for _, tt := range []struct {
		name, listen, config, want string
	}{
		{"no port", "notaport", "", "127.0.0.1:8080"},
		{"port too big", "127.0.0.1:99999", "", "from 1 to 65535"},
		{"port not a number", "127.0.0.1:abc", "", "from 1 to 65535"},
		{"not an address", "[::1", "", "host:port"},
		{"every address, no key", ":8080", "", "listen on 127.0.0.1:8080"},
		{"another machine, no key", "10.255.1.1:8080", "", "listen on 127.0.0.1:8080"},
		{"not this machine's", "192.0.2.1:8080", keyed, "no network interface"},
		{"no such name", "nosuchhost.invalid:8080", keyed, "not a name this machine can look up"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := []string{"run", "--listen", tt.listen, "--data-dir", t.TempDir()}
			if tt.config != "" {
				args = append(args, "--config", tt.config)
			}
			code, _, stderr := runOpsbot(t, args...)
			if code != 2 || !strings.Contains(stderr, tt.want) {
				t.Errorf("run --listen %s: exit %d, stderr %q; want 2 and %q", tt.listen, code, stderr, tt.want)
			}
			for _, jargon := range []string{"missing port in address", "invalid port", "unknown port", "lookup ", "api_key:", "address " + tt.listen} {
				if strings.Contains(stderr, jargon) {
					t.Errorf("run --listen %s: stderr %q shows Go's or the config's words %q", tt.listen, stderr, jargon)
				}
			}
		})
	}
}
