package policy

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// verdictCase is a command line and the verdict it must get.
type verdictCase struct {
	cmd  string
	want Action
}

// expectOn checks every case on each host.
func expectOn(t *testing.T, p *Policy, hosts []string, cases []verdictCase) {
	t.Helper()
	for _, host := range hosts {
		for _, tt := range cases {
			if d := p.Check(Target{Host: host}, tt.cmd); d.Action != tt.want {
				t.Errorf("on %s: %q: %s, want %s\n  %s", host, tt.cmd, d.Action, tt.want, strings.Join(d.Reasons, "\n  "))
			}
		}
	}
}

var bothHosts = []string{"web-1", "local"}

// TestDotDotAfterSymlink: ".." is walked as the kernel walks it, after
// the symlink's target (/var/run/.. is /, as /var/run leads to /run): on
// an SSH host any name may be a link, so the path is unplaced; on the
// bot's host the real links are followed.
func TestDotDotAfterSymlink(t *testing.T) {
	t.Parallel()
	expectOn(t, defaultPolicy(t), bothHosts, []verdictCase{
		{"cat /var/run/../etc/shadow", Approve},
		{"cat /var/run/../../etc/shadow", Approve},
		{"head -n3 /run/../etc/shadow", Approve},
		{"cat /etc/ssh/../shadow", Approve},
		{"cat /usr/../etc/gshadow", Approve},
		{"cat //etc//shadow", Approve},
		{"cat /./etc/./shadow", Approve},
		{"cat /../../etc/shadow", Approve},
		{"cat /dev/fd/../../etc/shadow", Approve},
		{"cat /var/log/syslog", Allow},
	})
	// Here /bin leads to /usr/bin, so /bin/../etc/shadow is
	// /usr/etc/shadow, which is none; an SSH host may differ.
	expectOn(t, defaultPolicy(t), []string{"local"}, []verdictCase{{"cat /bin/../etc/shadow", Allow}})
	expectOn(t, defaultPolicy(t), []string{"web-1"}, []verdictCase{{"cat /bin/../etc/shadow", Approve}})
}

// TestSymlinkChainOnLocalHost: on a real tree, a ".." after a chain of
// links reaches the secret where the kernel would, and a spelling that
// only looks like the secret's path is not it.
func TestSymlinkChainOnLocalHost(t *testing.T) {
	t.Parallel()
	dir := realDir(t)
	mkdirs(t, dir, "vault/inner", "plain")
	symlinks(t, dir, map[string]string{"door": "hall", "hall": dir + "/vault/inner"})
	p, err := NewPolicy(PolicyConfig{SecretPaths: []string{dir + "/vault/token"}})
	if err != nil {
		t.Fatal(err)
	}
	expectOn(t, p, []string{"local"}, []verdictCase{
		{"cat " + dir + "/door/../token", Approve}, // vault/inner/.. is vault
		{"cat " + dir + "/hall/../token", Approve},
		{"cd " + dir + "/door/.. && cat token", Approve}, // cd -P goes to vault
		{"cd " + dir + "/door && cat ../token", Approve},
		{"cat " + dir + "/plain/../vault/token", Approve},
		{"cat " + dir + "/plain/../token", Allow}, // no link: dir/token
		{"cat " + dir + "/vault/../token", Allow},
	})
	expectOn(t, p, []string{"web-1"}, []verdictCase{
		{"cat " + dir + "/door/../token", Approve}, // any name may be a link there
		{"cat " + dir + "/vault/token", Approve},
	})
}

// TestTildeForms: ~ and ~user are home directories (from the host's user
// database on the bot's host, anywhere on an SSH host: nobody's home is /
// on Fedora, sys's is /dev on Debian), ~+ is $PWD and ~- $OLDPWD;
// home-relative secrets (~/.aws) apply to every user's home.
func TestTildeForms(t *testing.T) {
	t.Parallel()
	expectOn(t, defaultPolicy(t), bothHosts, []verdictCase{
		{"cat ~root/../etc/shadow", Approve},
		{"cat ~/../../etc/shadow", Approve},
		{"cat ~root/../../etc/shadow", Approve},
		{"cat ~alice/.aws/credentials", Approve},
		{"cat ~root/.kube/config", Approve},
		{"cat ~nobody/etc/shadow", Approve}, // nobody's home may be /
		{"cat ~sys/mem", Approve},           // sys's home is /dev
		{"cat /home/bob/.aws/credentials", Approve},
		{"cat /root/.aws/credentials", Approve},
		{"cd /etc && cat ~+/shadow", Approve},
		{"cd /etc; cat ~+/./shadow", Approve},
		{"cat ~+/../../etc/shadow", Approve},
		{"cd /etc && cd /tmp && cat ~-/shadow", Approve},
		{"cat ~-/shadow", Approve},
		{"pushd /etc; pushd /tmp; cat ~1/shadow", Approve},
		{"cat ~+1/shadow", Approve},
		{"cat ~/notes.txt", Allow},
		{"git log --oneline HEAD~1", Allow}, // no tilde prefix
		{"ls ~alice", Allow},
		{"cat ~alice", Allow}, // a directory
		{"cat ~alice/..", Approve},
	})
	// The bot's host has a user database: root's home is /root.
	expectOn(t, defaultPolicy(t), []string{"local"}, []verdictCase{
		{"cat ~root/notes.txt", Allow},
		{"cat ~root/..", Allow},
	})
}

// TestCdTracking: relative paths are judged in every directory a cd of
// the command line may go to, whichever builtin or construct runs it.
func TestCdTracking(t *testing.T) {
	t.Parallel()
	expectOn(t, defaultPolicy(t), bothHosts, []verdictCase{
		{"cd /etc && cat shadow", Approve},
		{"command cd /etc && cat shadow", Approve},
		{"builtin cd /etc && cat shadow", Approve},
		{"command -p cd -- /etc; cat shadow", Approve},
		{"builtin command cd /etc; cat shadow", Approve},
		{"\\cd /etc && c''at sha''dow", Approve},
		{"cd -P /etc && cat ./shadow", Approve},
		{"pushd /etc >/dev/null && cat shadow", Approve},
		{"pushd /tmp; popd; cat shadow", Approve},
		{"cd /etc && cd /tmp && cd - && cat shadow", Approve},
		{"cd /tmp; cd etc; cat shadow", Approve}, // CDPATH may hold /
		{"(cd /etc && cat shadow)", Approve},
		{"(cd /etc); cat shadow", Approve}, // which cd counts where is not tracked
		{"f() { cd /etc; }; f; cat shadow", Approve},
		{"if true; then cd /etc; fi; cat shadow", Approve},
		{"for d in x; do cd /etc; done; cat shadow", Approve},
		{"while false; do cd /; done; cat etc/shadow", Approve},
		{"case x in x) cd /etc;; esac; cat shadow", Approve},
		{"true || cd /etc && cat shadow", Approve},
		{"echo $(cd /etc) && cat shadow", Approve},
		{"cd / && cat etc/shadow", Approve},
		{"cd /etc && cat ssl/../shadow", Approve},
		{"cd ~root && cat .aws/credentials", Approve},
		{"cd && cat .aws/credentials", Approve},
		{"cd /etc && grep -fshadow /dev/null", Approve}, // an attached value
		{"env -C /etc cat shadow", Approve},
		{"git -C /etc diff --no-index shadow /dev/null", Approve},
		{"git -c color.ui=never -C / diff --no-index etc/shadow /dev/null", Approve},
		{"tar -C /etc -tf shadow", Approve},
		{"git log -C --stat", Allow}, // after the subcommand -C finds copies
		{"git -C /srv/app log --oneline -5", Allow},
		{"cd /etc && cat hostname", Allow},
		{"cd /var/log && grep -i error syslog", Allow},
		{"command -v cd", Allow},
		{"cd ~ && cat notes.txt", Allow},
	})
}

// TestProcPaths: a process's cwd, root and descriptors lead anywhere.
func TestProcPaths(t *testing.T) {
	t.Parallel()
	expectOn(t, defaultPolicy(t), bothHosts, []verdictCase{
		{"cat /proc/self/cwd/../etc/shadow", Approve},
		{"cat /proc/self/cwd/.aws/credentials", Approve},
		{"cat /proc/self/root/etc/shadow", Approve},
		{"cat /proc/thread-self/root/etc/shadow", Approve},
		{"cat /proc/$$/root/etc/shadow", Approve},
		{"cat /proc/1/cwd/x", Approve},
		{"cat /proc/self/fd/3", Approve},
		{"cat /proc/self/task/1/environ", Approve},
		{"cat /proc/self/fd/../environ", Approve},
		{"cat /proc/loadavg", Allow},
	})
}

// TestWildcardsAndComputedPaths: globs, brace lists and variables that
// may expand to a secret path.
func TestWildcardsAndComputedPaths(t *testing.T) {
	t.Parallel()
	expectOn(t, defaultPolicy(t), bothHosts, []verdictCase{
		{"cat /etc/sha*", Approve},
		{"cat /etc/[s]hadow", Approve},
		{"cat /et?/shadow", Approve},
		{"cat /e*/../etc/shadow", Approve},
		{"cat /etc/{shadow,passwd}", Approve},
		{"cat /etc/{passwd,sha}dow", Approve},
		{"f=/etc/shadow; cat $f", Approve},
		{"cat $HOME/.aws/credentials", Approve},
		{"cat ${HOME}/../../etc/shadow", Approve},
		{"cat /var/log/syslog.?", Allow},
	})
}

// TestFileListOptions: an option naming a file the program reads puts
// that file through the secret check, also for programs that show only
// names (the file's lines come back as names), and a list of names for a
// program that prints what they hold is a read of files known only when
// it runs.
func TestFileListOptions(t *testing.T) {
	t.Parallel()
	expectOn(t, defaultPolicy(t), bothHosts, []verdictCase{
		{"xargs -a /etc/shadow echo", Approve},
		{"xargs --arg-file=/etc/shadow", Approve},
		{"xargs --arg-file /etc/shadow echo", Approve},
		{"xargs --arg=/etc/shadow echo", Approve},
		{"xargs -0a/etc/shadow echo", Approve},
		{"cd /etc && xargs -a shadow", Approve},
		{"tree --fromfile /etc/shadow", Approve},
		{"cd /etc && tree --fromfile shadow", Approve},
		{"tree --infofile=/etc/shadow /srv", Approve},
		{"find -files0-from /etc/shadow", Approve},
		{"find -files0-from ~root/../etc/shadow -maxdepth 0", Approve},
		{"du --files0-from=/etc/shadow", Approve},
		{"du --files0=/etc/shadow", Approve},
		{"du -sX /etc/shadow /srv", Approve},
		{"du --exclude-from /etc/shadow /srv", Approve},
		{"file -f /etc/shadow", Approve},
		{"file --files-from /etc/shadow", Approve},
		{"file -m /etc/shadow /bin/ls", Approve},
		{"pgrep -F /etc/shadow", Approve},
		{"whatis -C /etc/shadow ls", Approve},
		{"wc --files0-from=/etc/shadow", Approve},
		{"sort --files0-from=/tmp/list", Approve}, // prints the files the list names
		{"wc --files0-from=list.txt", Approve},
		{"grep -f /etc/shadow /dev/null", Approve},
		{"diff --from-file=/etc/shadow /dev/null", Approve},
		{"jq -n --rawfile s /etc/shadow '$s'", Approve},
		{"comm /etc/shadow /dev/null", Approve},
		{"xargs -a hosts.txt echo", Allow},
		{"du --exclude='*.log' -sh /var/log", Allow},
		{"du -sh /var/lib", Allow},
		{"tree -L 2 /etc", Allow},
		{"find /var/log -name '*.gz'", Allow},
		{"file /bin/ls", Allow},
		{"pgrep -f nginx", Allow},
	})
}

// TestProcessSubstitutionIsNoSecretPath: <(…) is a pipe from a command
// classified on its own, not the /dev/fd path that stands for it on the
// command line; what runs inside is still judged.
func TestProcessSubstitutionIsNoSecretPath(t *testing.T) {
	t.Parallel()
	expectOn(t, defaultPolicy(t), bothHosts, []verdictCase{
		{"diff <(ls) <(ls /tmp)", Allow},
		{"comm -12 <(sort a.txt) <(sort b.txt)", Allow},
		{"while read -r l; do echo \"$l\"; done < <(ls /var/log)", Allow},
		{"awk 'NR==1' <(ps aux)", Allow},
		{"diff <(cat /etc/shadow) <(ls)", Approve},
		{"cat < <(cat ~/.aws/credentials)", Approve},
	})
}

// TestPathsCorpus: every line of testdata/paths.txt gets its verdict on an
// SSH host and on the bot's host.
func TestPathsCorpus(t *testing.T) {
	t.Parallel()
	p := fleetPolicy(t)
	lines := readCorpus(t, filepath.Join("testdata", "paths.txt"))
	if len(lines) < 100 {
		t.Fatalf("the paths corpus has %d lines, want at least 100", len(lines))
	}
	var cases []verdictCase
	for _, line := range lines {
		verdict, cmd, _ := strings.Cut(line, " ")
		want, err := ParseAction(verdict)
		if err != nil {
			t.Fatalf("%q: the line must start with allow, approve or deny", line)
		}
		if q, ok := strings.CutPrefix(cmd, "q:"); ok {
			if cmd, err = strconv.Unquote(q); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
		}
		cases = append(cases, verdictCase{cmd, want})
	}
	expectOn(t, p, bothHosts, cases)
}
