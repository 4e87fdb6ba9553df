package hosts

import (
	"slices"
	"testing"
)

// TestScanWords: what the scan looks at. Metadata readers cost nothing;
// content readers' words are checked; a line that may open paths found
// in data checks every word, and the working directory only when a word
// may name it (TestScanWordsWorkingDirectory).
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
		{"grep -r foo /srv/app", []string{"-r", "foo", "/srv/app"}, false},
		{"grep -rn foo", []string{"-rn", "foo"}, true},
		{"rg foo", []string{"foo"}, true},
		{"cat /srv/app/*.conf 'a b'", []string{`/srv/app/*.conf`, "a b", "a", "b"}, false},
		{`cat "x*"`, []string{`x\*`}, false},
		{"ls -d /srv/* | xargs cat", []string{"cat", "-d", "/srv/*"}, false},
		{"cat $(ls /srv)", []string{"/srv"}, false},
		{"timeout 5 df -P /", nil, false},
		{"find /srv -name x", []string{"/srv", "-name", "x"}, false},
		{"awk '{ while ((getline l < $0) > 0) print l }' list", []string{"{ while ((getline l < $0) > 0) print l }", "while", "getline", "l", "0", "print", "list"}, false},
		{"cat < /srv/x.key", []string{"/srv/x.key"}, false},
		{"if (", []string{"if"}, true},
	} {
		words, cwd, _ := scanWords(c.command)
		if !slices.Equal(words, c.words) || cwd != c.cwd {
			t.Errorf("scanWords(%q) = %q, %v; want %q, %v", c.command, words, cwd, c.words, c.cwd)
		}
	}
}

// TestScanWordsWorkingDirectory: the working directory is scanned when
// the command may read its tree by its words, or (near) when one of its
// relative words exists there; words that are no path, and variables
// from the environment, scan none of it.
func TestScanWordsWorkingDirectory(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		command string
		cwd     bool
		near    []string
	}{
		{"docker ps", false, []string{"ps"}},
		{"echo $PATH", false, nil},
		{"curl -s https://example.com/x", false, []string{"https://example.com/x"}},
		{"journalctl -u nginx --since today", false, nil},
		{"systemctl status nginx", false, nil},
		{"d=/srv/app; cat $d/*", false, nil},
		{"cat $HOME/notes", false, nil},
		{"while read -r f; do cat \"$f\"; done < list", false, []string{"f", "list"}},
		{"grep -r x", true, nil},
		{"grep -r x /srv/app", false, nil},
		{"grep -rn -A 3 -e x -e y /srv/app", false, nil},
		{"grep -rn -A 3 x", true, nil},
		{"grep -r --exclude-dir node_modules -e x", true, nil},
		{"grep -rl x -- -dir", false, nil},
		{"git grep x", true, nil},
		{"find -name x -exec cat {} +", true, nil},
		{"find . -type f | xargs cat", true, nil},
		{"ls | xargs cat", true, nil},
		{"du -a | cut -f2 | xargs cat", true, nil},
		{"echo | xargs grep -r x", true, nil},
		{"sudo grep -R x", true, nil},
		{"sh -c 'grep -r x'", true, nil},
		{"bash -lc \"sh -c 'cat *'\"", true, nil},
		{"cat $(echo *)", true, nil},
		{"for f in */*; do cat $f; done", true, nil},
		{"./deploy.sh", true, nil},
		{"python3 -c 'import os'", true, nil},
		{"ag x", true, nil},
	} {
		_, cwd, near := scanWords(c.command)
		if cwd != c.cwd || !slices.Equal(near, c.near) {
			t.Errorf("scanWords(%q): cwd %v, near %q; want %v, %q", c.command, cwd, near, c.cwd, c.near)
		}
	}
}
