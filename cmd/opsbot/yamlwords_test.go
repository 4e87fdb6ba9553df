package main

import (
	"strings"
	"testing"
)

// TestSyntaxErrorsOnTheirLine: the parser's errors raised while reading a
// [ ] list or a block (reported by yaml.v3 one line early, or without a
// line on the first) name the line the list is on, and an unquoted ${NAME}
// inside a [ ] list (DEPLOY.md's old credentials recipe) says to quote it,
// in words, without the parser's.
func TestSyntaxErrorsOnTheirLine(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, yaml string
		want       []string
		not        []string
	}{
		{"reference in a flow list", "ssh:\n  known_hosts: /k\n  identity_files: [${CREDENTIALS_DIRECTORY}/id_ed25519]\n",
			[]string{"bad.yaml:3:", "${NAME} inside a [ ] list must be quoted", "- ${NAME}/file"}, []string{"did not find", "flow"}},
		{"list not closed", "log:\n  level: [info, debug\nstore:\n  path: x\n",
			[]string{"bad.yaml:2:", "a [ ] list is not closed"}, []string{"did not find"}},
		{"list not closed on the first line", "a: [x, y\n\n",
			[]string{"bad.yaml:1:", "a [ ] list is not closed"}, nil},
		{"mapping not closed", "log:\n  level: info\nweb: {listen: x\n",
			[]string{"bad.yaml:3:", "a { } mapping is not closed"}, nil},
		{"scanner error keeps its line", "log:\n  level: info\n  format: @json\n",
			[]string{"bad.yaml:3:", "quote the value"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := parseConfig("bad.yaml", []byte(c.yaml), env(map[string]string{"CREDENTIALS_DIRECTORY": "/run/credentials/opsbot.service"}))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not say %q", err, w)
				}
			}
			for _, n := range c.not {
				if strings.Contains(err.Error(), n) {
					t.Errorf("%q shows the parser's words %q", err, n)
				}
			}
		})
	}
}
