package policy

import (
	"strings"
	"testing"
)

// TestGitnetCorpus: every line of testdata/gitnet.txt (git and python
// running code named in files, fetches a flag names, environment dumps)
// gets its verdict on an SSH host and on the bot's own host.
func TestGitnetCorpus(t *testing.T) {
	t.Parallel()
	p := fleetPolicy(t)
	lines := readCorpus(t, "testdata/gitnet.txt")
	for _, line := range lines {
		verdict, cmd, _ := strings.Cut(line, " ")
		want, err := ParseAction(verdict)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		for _, host := range []string{"web-1", "local"} {
			if d := p.Check(Target{Host: host}, cmd); d.Action != want {
				t.Errorf("on %s: %q: %s, want %s\n  %s", host, cmd, d.Action, want, strings.Join(d.Reasons, "\n  "))
			}
		}
	}
}

// gitnetClasses are, per class, spellings that must need a person and
// everyday spellings that must stay allowed.
var gitnetClasses = []struct {
	class   string
	approve []string
	allow   []string
}{
	{"git runs a command its config names per path when asked",
		[]string{"git diff --textconv", "git log -p --textconv", "git show --textc", "git blame --textconv a.txt", "git diff --textconv --stat",
			"git log --ext-diff", "git diff --ext-diff", "git cat-file --filters HEAD:a", "git cat-file --textconv HEAD:a",
			"git grep --textconv x", "git stash show -p --textconv"},
		[]string{"git status", "git log", "git log --oneline -20", "git diff", "git diff --stat", "git diff --name-only HEAD~1",
			"git diff --no-ext-diff --no-textconv", "git log -p", "git log -p --no-textconv", "git show", "git show HEAD --stat",
			"git show HEAD:a.txt", "git blame a.txt", "git grep -n TODO", "git diff --text", "git stash show -p"}},
	{"git skips its ownership check or connects where the config says",
		[]string{"git --git-dir=.git log", "git --work-tree=. status", "GIT_DIR=/x git status", "git ls-remote", "git ls-remote -h origin",
			"git remote show origin", "git -c x=y status", "git --exec-path=/tmp status"},
		[]string{"git -C /srv/app status", "git -C /srv/app log --oneline", "git remote -v", "git remote show -n origin"}},
	{"git reads files outside the repository",
		[]string{"git diff --no-index --no-ext-diff --no-textconv /etc/shadow /dev/null", "git -C /etc diff --no-index --no-ext-diff --no-textconv shadow x",
			"git diff --no-ext-diff --no-textconv /etc/ssl/private /tmp", "git grep --no-index x", "git grep --no-index -e x -- /etc",
			"git -C /etc show HEAD:shadow", "git blame --no-textconv --contents=/tmp/x a.txt", "cd /etc && git show",
			"git -C ../../etc log -p", "git -C /etc cat-file -p HEAD:shadow"},
		[]string{"git diff --no-ext-diff --no-textconv HEAD~1 HEAD", "git grep --no-index -e x /srv/app", "git show HEAD:README.md",
			"cd /srv/app && git log -p", "cd /etc && git log --oneline", "git -C /srv/app show"}},
	{"python imports from the working directory",
		[]string{"python3 -m json.tool", "python3 -m json.tool f.json", "python3.11 -m json.tool", "python -E -m json.tool",
			"python3 -P -m json.tool"},
		[]string{"python3 -I -m json.tool f.json", "python3 -Im json.tool", "python3 -sI -m json.tool", "python3 --version"}},
	{"a client fetches what a flag names",
		[]string{"kubectl get -f http://x/y", "kubectl apply -f http://x/y", "kubectl get -k dir", "kubectl get --raw /api/v1/nodes/n/proxy/",
			"rpm -qp http://x/y.rpm", "lspci -q", "lspci -O net.domain=x", "wget -i urls", "helm show values https://x/c.tgz",
			"openssl x509 -in http://x/c.pem", "docker compose -f https://x/c.yml ps"},
		[]string{"openssl x509 -in c.crt -noout -dates", "docker compose ps", "kubectl get pods", "kubectl get -f deploy.yaml", "kubectl get --raw /healthz", "kubectl get --raw /metrics",
			"rpm -qa", "rpm -qi openssl", "rpm -qf /usr/bin/ls", "lspci", "lspci -vnn", "lspci -k", "helm list -A"}},
	{"a read prints an environment",
		[]string{"systemctl show nginx", "systemctl show -p Environment nginx", "systemctl show --property=Id,Environment", "systemctl cat nginx",
			"systemctl show-environment", "docker top web e", "docker top web -o pid,environ", "docker history nginx", "docker inspect web",
			"podman top web -ef", "helm env", "ps -o pid,environ", "kubectl get secret x -o yaml", "kubectl exec web -- env",
			"kubectl describe secret x"},
		[]string{"systemctl status nginx", "systemctl show -p ActiveState,SubState nginx", "systemctl show --property=MainPID nginx",
			"docker top web", "docker top web aux", "docker top web -ef", "podman top web pid user args", "docker ps", "docker logs web",
			"docker network inspect bridge", "ps aux", "ps -eo pid,comm", "kubectl describe pod x", "kubectl describe nodes"}},
}

// TestGitnetClasses: each class's spellings need approval on both kinds
// of host, and its everyday reads stay allowed.
func TestGitnetClasses(t *testing.T) {
	t.Parallel()
	p := fleetPolicy(t)
	for _, c := range gitnetClasses {
		for _, host := range []string{"web-1", "local"} {
			for _, cmd := range c.approve {
				if d := p.Check(Target{Host: host}, cmd); d.Action == Allow {
					t.Errorf("%s: on %s %q is allowed", c.class, host, cmd)
				}
			}
			for _, cmd := range c.allow {
				if d := p.Check(Target{Host: host}, cmd); d.Action != Allow {
					t.Errorf("%s: on %s %q: %s, want allow\n  %s", c.class, host, cmd, d.Action, strings.Join(d.Reasons, "\n  "))
				}
			}
		}
	}
}
