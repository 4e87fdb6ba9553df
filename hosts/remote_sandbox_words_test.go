package hosts

import (
	"slices"
	"testing"
)

// TestScanWords: what the scan looks at. Metadata readers cost nothing;
// content readers' words are checked; a line that may open paths found
// in data checks every word and the working directory.
func TestScanWords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		command string
		words   []string
		cwd     bool
	}{
		{"uptime", nil, false},
		{"df -P /", nil, false},
		{"df -P / | awk 'NR==2 {print $5+0}'", []string{"NR==2 {print $5+0}", "=2 {print $5+0}", "NR", "2", "print", "5+0"}, false},
		{"ls -la /srv/app; stat /etc", nil, false},
		{"grep -r foo /srv/app", []string{"-r", "foo", "/srv/app"}, true}, // a pattern may be an option's value: the directory is scanned too
		{"grep -rn foo", []string{"-rn", "foo"}, true},
		{"rg foo", []string{"foo"}, true},
		{"cat /srv/app/*.conf 'a b'", []string{`/srv/app/*.conf`, "a b", "a", "b"}, false},
		{`cat "x*"`, []string{`x\*`}, false},
		{"ls -d /srv/* | xargs cat", []string{"cat", "-d", "/srv/*"}, true},
		{"cat $(ls /srv)", []string{"/srv"}, true},
		{"timeout 5 df -P /", nil, false},
		{"find /srv -name x", []string{"/srv", "-name", "x"}, true},
		{"awk '{ while ((getline l < $0) > 0) print l }' list", []string{"{ while ((getline l < $0) > 0) print l }", "while", "getline", "l", "0", "print", "list"}, true},
		{"cat < /srv/x.key", []string{"/srv/x.key"}, false},
		{"if (", []string{"if"}, true},
	} {
		words, cwd := scanWords(c.command)
		if !slices.Equal(words, c.words) || cwd != c.cwd {
			t.Errorf("scanWords(%q) = %q, %v; want %q, %v", c.command, words, cwd, c.words, c.cwd)
		}
	}
}
