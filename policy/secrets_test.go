package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOverlap(t *testing.T) {
	t.Parallel()
	pat := func(s string) string {
		return strings.NewReplacer("S", string(anyString), "N", string(anyName), "?", string(anyByte), "D", string(noDot)).Replace(s)
	}
	tests := []struct {
		a, b string
		want bool
	}{
		{"/etc/shadow", "/etc/shadow", true},
		{"/etc/shadow", "/etc/passwd", false},
		{"/etc/S", "/etc/shadow", true},
		{"/etc/sha?ow", "/etc/shadow", true},
		{"S/status", "/proc/S/environ", false},
		{"/proc/S/status", "/proc/S/environ/S", true}, // a computed element may hold "1/environ/x/.."
		{"/var/log/DN", "S/.aws/S", false},            // dir/* matches no dot file
		{"/var/log/DN", "S/.aws", false},
		{"/root/DN", "S/id_rsa", true},
		{"/var/log/N.log", "S/id_rsa", false},
		{"/etc/N", "/etc/ssl/private/S", false}, // a glob's * stays in one element
		{"/etc/S", "/etc/ssl/private/S", true},  // a variable's value may not
		{"SS", "", true},
		{"N/x", "/x", true},
	}
	for _, tt := range tests {
		if got := overlap(pat(tt.a), pat(tt.b)); got != tt.want {
			t.Errorf("overlap(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got := overlap(pat(tt.b), pat(tt.a)); got != tt.want {
			t.Errorf("overlap(%q, %q) = %v, want %v (reversed)", tt.b, tt.a, got, tt.want)
		}
	}
}

// TestSecretPathsFollowSymlinksLocally: on the bot's own host a path is
// judged where its symlinks lead, both ways: a link into a secret
// directory, and a secret entry that is itself a link. On an SSH host the
// policy cannot see the links.
func TestSecretPathsFollowSymlinksLocally(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secretDir := filepath.Join(dir, "vault")
	realConf := filepath.Join(dir, "real", "bot.yaml")
	for _, d := range []string{secretDir, filepath.Dir(realConf)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(realConf, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "innocent")
	confLink := filepath.Join(dir, "bot.yaml")
	if err := os.Symlink(secretDir, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(realConf, confLink); err != nil {
		t.Fatal(err)
	}
	p, err := NewPolicy(PolicyConfig{SecretPaths: []string{secretDir, confLink}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		host, cmd string
		want      Action
	}{
		{"local", "cat " + link + "/token", Approve},
		{"local", "cat " + link + "/sub/../token", Approve},
		{"local", "cat " + realConf, Approve},
		{"local", "cat " + filepath.Join(dir, "real", "other"), Allow},
		{"web-1", "cat " + secretDir + "/token", Approve},
		{"web-1", "cat " + link + "/token", Allow}, // the link is on this machine, not on web-1
	}
	for _, tt := range tests {
		if d := p.Check(Target{Host: tt.host}, tt.cmd); d.Action != tt.want {
			t.Errorf("on %s: %q: %s, want %s\n  %s", tt.host, tt.cmd, d.Action, tt.want, strings.Join(d.Reasons, "\n  "))
		}
	}
}

// TestSecretAndEgressConfig: policy.secret_paths and policy.egress_allow
// extend the defaults, a rule may still allow one read, and the
// inventory's names cover only themselves.
func TestSecretAndEgressConfig(t *testing.T) {
	t.Parallel()
	p, err := NewPolicy(PolicyConfig{
		SecretPaths: []string{"/srv/app/.env", "~/.config/acme", "vault-token"},
		EgressAllow: []string{"corp.example", "*.svc.cluster.local", "192.0.2.0/24", "2001:db8::1", "[::1]:8080", "localhost:8080", "metrics.example:9100"},
		KnownHosts:  []string{"web-1", "198.51.100.7"},
		Rules: []RuleConfig{{Program: "cat", Args: []string{"/srv/app/.env"}, Action: "allow", Reason: "the app's env holds no secret here"},
			{Program: "curl", Args: []string{"-s", "https://status.vendor.example/"}, Action: "allow"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		cmd  string
		want Action
	}{
		{"cat /srv/app/.env", Allow}, // the rule allows this read
		{"head /srv/app/.env", Approve},
		{"cat /home/ops/.config/acme/key", Approve},
		{"cat vault-token", Approve},
		{"cat /etc/shadow", Approve}, // the defaults stay
		{"curl -s https://corp.example/health", Allow},
		{"curl -s https://api.corp.example/health", Allow},
		{"curl -s https://corp.example.evil.example/", Approve},
		{"curl -s https://notcorp.example/", Approve},
		{"dig +short db.svc.cluster.local", Allow},
		{"dig +short svc.cluster.local", Approve}, // *.domain: only names below it
		{"ping -c 1 192.0.2.44", Allow},
		{"ping -c 1 192.0.3.1", Approve},
		{"ping6 -c 1 2001:db8::1", Allow},
		{"dig +short web-1", Allow},
		{"dig +short x.web-1", Approve}, // an inventory name is not a domain
		{"nc -z 198.51.100.7 22", Allow},
		{"curl -s https://status.vendor.example/", Allow}, // a rule allows this destination
		{"curl -s https://status.vendor.example/x", Approve},
		{"curl -s 'http://[::1]:8080/'", Allow}, // host:port entries
		{"curl -s http://localhost:8080/", Allow},
		{"curl -s http://127.0.0.1:8080/", Approve}, // another spelling may be another listener
		{"curl -s http://localhost:8081/", Approve},
		{"curl -s http://metrics.example:9100/metrics", Allow},
		{"curl -s http://metrics.example/", Approve}, // host:port is that port only
	}
	for _, tt := range tests {
		if d := p.Check(Target{Host: "web-1"}, tt.cmd); d.Action != tt.want {
			t.Errorf("%q: %s, want %s\n  %s", tt.cmd, d.Action, tt.want, strings.Join(d.Reasons, "\n  "))
		}
	}
}

func TestSecretAndEgressConfigValidate(t *testing.T) {
	t.Parallel()
	err := PolicyConfig{SecretPaths: []string{"rel/path", "~bob/x", ""}, EgressAllow: []string{"not a host", "10.0.0.0/33", "ok.example"}}.Validate()
	if err == nil {
		t.Fatal("Validate accepted bad entries")
	}
	for _, want := range []string{"secret_paths[0]", "secret_paths[1]", "secret_paths[2]", "egress_allow[0]", "egress_allow[1]"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not name %s: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "egress_allow[2]") {
		t.Errorf("a good entry was refused: %v", err)
	}
}

// TestComputedPathReasonSaysComputed: a word computed at run time needs
// approval because it could name a credential file; the reason says that,
// not "secret path /etc/shadow". Process ids are not files.
func TestComputedPathReasonSaysComputed(t *testing.T) {
	t.Parallel()
	p, err := NewPolicy(PolicyConfig{})
	if err != nil {
		t.Fatal(err)
	}
	d := p.Check(Target{Host: "web-1"}, "wc -l $f")
	if d.Action != Approve || !strings.Contains(strings.Join(d.Reasons, "; "), "a path computed when it runs") || strings.Contains(strings.Join(d.Reasons, "; "), "/etc/shadow") {
		t.Errorf("wc -l $f: %v %q", d.Action, strings.Join(d.Reasons, "; "))
	}
	for _, cmd := range []string{"ps -o pid -p $PPID", "pgrep -f \"$SERVICE\""} {
		if d := p.Check(Target{Host: "web-1"}, cmd); d.Action != Allow {
			t.Errorf("%s: %v %q; its operands are not files", cmd, d.Action, strings.Join(d.Reasons, "; "))
		}
	}
	for _, cmd := range []string{"ps e", "ps auxe", "ps eww -p 1"} {
		if d := p.Check(Target{Host: "web-1"}, cmd); d.Action == Allow {
			t.Errorf("%s: allowed; it dumps environments", cmd)
		}
	}
}

// TestUnplacedPathReasonNamesNoSecret: a path whose folder is known only
// when it runs (it climbs out of the working directory, or follows a cd
// to a computed place) may be a credential file anywhere; the reason says
// so without citing a secret it does not name ("cat ../x.yaml … (secret
// path /etc/shadow)" misled a try-out). A path that names a secret still
// cites it.
func TestUnplacedPathReasonNamesNoSecret(t *testing.T) {
	t.Parallel()
	p, err := NewPolicy(PolicyConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"cat ../x.yaml", "cat < ../../app/conf.ini", `cd "$DIR" && cat settings.txt`, "head sub/../../y.txt"} {
		d := p.Check(Target{Host: "web-1"}, cmd)
		why := strings.Join(d.Reasons, "; ")
		if d.Action != Approve || !strings.Contains(why, "known only when it runs") || strings.Contains(why, "secret path") || strings.Contains(why, "/etc/shadow") {
			t.Errorf("%s: %v %q", cmd, d.Action, why)
		}
	}
	for cmd, entry := range map[string]string{"cat /etc/shadow": "/etc/shadow", "cat < ~/.ssh/id_rsa": "id_rsa"} {
		d := p.Check(Target{Host: "web-1"}, cmd)
		if why := strings.Join(d.Reasons, "; "); d.Action != Approve || !strings.Contains(why, "secret path "+entry) {
			t.Errorf("%s: %v %q; want it to cite %s", cmd, d.Action, why, entry)
		}
	}
}
