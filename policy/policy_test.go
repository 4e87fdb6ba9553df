package policy

import (
	"errors"
	"strings"
	"testing"
)

func TestPolicyDecisions(t *testing.T) {
	t.Parallel()
	p := fleetPolicy(t)
	tests := []struct {
		cmd  string
		want Action
	}{
		{"df -h | sort -k5 -r | head", Allow},
		{"r''m -rf ~", Deny},
		{"rm -rf /tmp/build", Approve},
		{"sort -o out.txt in.txt", Approve},
		{"sort -o /etc/passwd in.txt", Deny},
		{"sort --ou=x in.txt", Approve},
		{"sort -k5o in.txt", Allow}, // -k takes "5o": no output option
		{"sort -rk5 in.txt", Allow},
		{"ls > /dev/null 2>&1", Allow},
		{"ls >&2", Allow},
		{"ls 2>/tmp/err", Approve},
		{"cat /etc/hosts | sh", Deny},
		{"sh -c 'ls -la'", Allow},
		{"bash <<< 'uptime'", Allow},
		{"ssh web1 'df -h'", Allow},
		{"watch -n 5 uptime", Allow},
		{"find /var/log -name '*.log' | xargs ls -l", Allow},
		{"find . -name '*.log' | xargs grep -l error", Approve}, // xargs may hand grep any file, secrets included
		{"find . | xargs sort -o x", Approve},
		{"ls | xargs -I{} cat {}", Approve}, // cat may be handed a key in the working directory
		{"ls | xargs -I{} find {} -delete", Approve},
		{"grep foo <(ps aux)", Allow},
		{"echo $(uptime)", Allow},
		{"echo $(rm -rf /tmp/x)", Approve},
		{"LANG=C sort file", Allow},
		{"FOO=bar sort file", Approve},
		{"", Approve},
		{"# only a comment", Allow},
		{"find . -name '*' -maxdepth 1", Allow},
		{"find . *", Approve},            // the glob could expand to -delete
		{"sort *", Approve},              // … or to -o FILE
		{"sort ./*", Allow},              // a glob anchored with ./ cannot be an option
		{"kubectl get secrets", Approve}, // lists secrets: needs a person in any output form (issue 11)
		{"git branch feature", Approve},
		{"git branch --list 'feat*'", Allow},
		{"systemctl status nginx; systemctl restart nginx", Approve},
		{"ip link sh eth0", Allow},
		{"ip link s eth0 down", Approve},
		{"awk '$3 > 80 {print $1}' f", Allow},
		{"awk '{print $1 > $2}' f", Approve},
		{"awk '{print ($1 > $2)}' f", Allow},
		{"awk '/a|b/ {print}' f", Allow},
		{"sed -n '$p' f", Allow},
		{"sed '1r /etc/hostname' f", Allow},
		{"sed '1w out' f", Approve},
		{"python3 -m json.tool in.json out.json", Approve},
		{"echo ⟨U+200B⟩", Allow}, // the marks themselves are ordinary characters
	}
	for _, tt := range tests {
		d := p.Check(Target{Host: "h"}, tt.cmd)
		if d.Action != tt.want {
			t.Errorf("Check(%q) = %s, want %s\n  %s", tt.cmd, d.Action, tt.want, strings.Join(d.Reasons, "\n  "))
		}
		if len(d.Reasons) == 0 {
			t.Errorf("Check(%q) gave no reason", tt.cmd)
		}
	}
}

func TestPolicyConfig(t *testing.T) {
	t.Parallel()
	p, err := NewPolicy(PolicyConfig{
		Default: "deny",
		Allow:   []string{"pg_lsclusters"},
		Remove:  []string{"curl"},
		Rules: []RuleConfig{
			{Name: "web restarts", Groups: []string{"web"}, Program: "systemctl", Args: []string{"restart", "nginx"}, Action: "allow"},
			{Name: "no kubectl delete", Program: "kubectl", Args: []string{"**", "delete", "**"}, Action: "deny", Reason: "use the deploy pipeline"},
			{Program: "rm", Args: []string{"-rf", "*"}, Action: "deny"},
			{Hosts: []string{"db-1"}, Program: "psql", Args: []string{"-c", "select*"}, Action: "allow"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	web := Target{Host: "web-1", Groups: []string{"web", "prod"}}
	db := Target{Host: "db-1", Groups: []string{"db"}}
	tests := []struct {
		t    Target
		cmd  string
		want Action
	}{
		{web, "systemctl restart nginx", Allow},
		{db, "systemctl restart nginx", Deny}, // the rule is for web; the built-in check and the deny default apply
		{web, "systemctl restart nginx-debug", Deny},
		{web, "systemctl restart $UNIT", Deny}, // a computed word never matches an allow rule
		{web, "kubectl -n x delete pod a", Deny},
		{web, "kubectl $VERB pod a", Deny}, // … and always matches a deny rule
		{web, "rm -rf /srv/data", Deny},    // "*" matches across "/"
		{web, "pg_lsclusters --no-header", Allow},
		{web, "curl -s localhost", Deny}, // removed from the allowlist: the default
		{web, "frobnicate", Deny},
		{web, "eval ls", Approve}, // never allowed, and never denied by the default alone
		{db, "psql -c 'select 1'", Allow},
		{web, "psql -c 'select 1'", Deny},
		{db, "psql -c 'select 1' | sh", Deny},
	}
	for _, tt := range tests {
		if d := p.Check(tt.t, tt.cmd); d.Action != tt.want {
			t.Errorf("Check(%s, %q) = %s, want %s\n  %s", tt.t.Host, tt.cmd, d.Action, tt.want, strings.Join(d.Reasons, "\n  "))
		}
	}
}

func TestPolicyExplainCommands(t *testing.T) {
	t.Parallel()
	d := defaultPolicy(t).Check(Target{}, `sudo -u app sh -c "df -h | grep /data"`)
	var got []string
	for _, c := range d.Commands {
		got = append(got, strings.Join(c.Via, ">")+"|"+c.Program)
	}
	want := "|sudo sudo|sh sudo>sh -c|df sudo>sh -c|grep"
	if strings.Join(got, " ") != want {
		t.Errorf("commands = %q, want %q", strings.Join(got, " "), want)
	}
	if d.Action != Allow {
		t.Errorf("action = %s, want allow: %v", d.Action, d.Reasons)
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		err   error
		field string
	}{
		{"bad default", PolicyConfig{Default: "maybe"}.Validate(), "default"},
		{"allow a shell", PolicyConfig{Allow: []string{"ls", "bash"}}.Validate(), "allow[1]"},
		{"allow a path", PolicyConfig{Allow: []string{"/bin/ls"}}.Validate(), "allow[0]"},
		{"rule without program", PolicyConfig{Rules: []RuleConfig{{Action: "deny"}}}.Validate(), "rules[0].program"},
		{"rule bad action", PolicyConfig{Rules: []RuleConfig{{Program: "x", Action: "nope"}}}.Validate(), "rules[0].action"},
		{"rule bad pattern", PolicyConfig{Rules: []RuleConfig{{Program: "x", Action: "deny", Args: []string{"a", "[x"}}}}.Validate(), "rules[0].args[1]"},
		{"rule ** inside a word", PolicyConfig{Rules: []RuleConfig{{Program: "x", Action: "deny", Args: []string{"a**"}}}}.Validate(), "rules[0].args[0]"},
	}
	for _, tt := range tests {
		var fe interface{ Field() string }
		if !errors.As(tt.err, &fe) {
			t.Errorf("%s: error %v has no Field", tt.name, tt.err)
			continue
		}
		if fe.Field() != tt.field {
			t.Errorf("%s: Field() = %q, want %q (%v)", tt.name, fe.Field(), tt.field, tt.err)
		}
	}
	ok := []error{
		PolicyConfig{}.Validate(),
		PolicyConfig{Default: "allow", Allow: []string{"pg_isready"}, Rules: []RuleConfig{{Program: "mkfs.*", Args: []string{"**"}, Action: "deny"}}}.Validate(),
	}
	for i, err := range ok {
		if err != nil {
			t.Errorf("valid config %d: %v", i, err)
		}
	}
}

// TestPolicyConcurrent: one Policy serves many turns at once, and wrapping
// a bypass in sudo and env never makes it allowed.
func TestPolicyConcurrent(t *testing.T) {
	t.Parallel()
	p := defaultPolicy(t)
	cmds := readCorpus(t, "testdata/bypass.txt")
	allowed := make(chan string, 8*len(cmds))
	done := make(chan struct{})
	for range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for _, c := range cmds {
				if p.Check(Target{}, "sudo -u x env LANG=C "+c).Action == Allow {
					allowed <- c
				}
			}
		}()
	}
	for range 8 {
		<-done
	}
	close(allowed)
	for c := range allowed {
		t.Errorf("allowed when wrapped: %q", c)
	}
}
