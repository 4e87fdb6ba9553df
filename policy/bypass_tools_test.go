package policy

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// toolCases are the round-3 classes of issue 24 in the tools' own
// grammars, several spellings each, with the verdict on an SSH host.
var toolCases = []struct {
	class string
	cmds  []string
	want  Action
}{
	{"sed label ends at a blank, ; } #", []string{"sed -e 'tx e id' -e ':x' f", "sed -n ':a e id' f", "sed 'tx w out\n:x' f",
		"sed -n 'bx}e id' f", "sed -n 'bx;#x' -e 'e id' f", "sed -n 't x\te id\n:x' f", "sed -n ':a;ba e id' f"}, Approve},
	{"sed text and e carried into the next -e", []string{"sed -e 'e\\' -e id f", "sed -e 'a x\\' -e y -e 'e id' f",
		"sed -e '1{' -e 'e id' -e '}' f"}, Approve},
	{"sed text lines a sed ending the text early would run", []string{"sed '1a\\\nhello\\\n1e id' f", "sed -e '1a\\' -e 'e id' f",
		"sed '1i\\\nfoo\\\nw out' f", "sed -e 'c x\\' -e 's/x/id/e' f"}, Approve},
	{"sed texts", []string{"sed '1a\\\nhello\\\nthere' f", "sed '$a end' f", "sed -e '1i\\' -e 'header' f"}, Allow},
	{"sed s flags", []string{"sed 's/x/y/e' f", "sed 's/x/y/3e' f", "sed 's/x/y/ w out' f", "sed 's/x/y/gpw out' f",
		"sed 's/[/]/x/w out' f"}, Approve},
	{"sed r and R of a name the secret check cannot see", []string{"sed rshadow f", "sed '1R.ssh/id_rsa' f", "sed 'r /etc/my secret' f"}, Approve},
	{"sed -i in every spelling", []string{"sed -i p f", "sed -i.bak p f", "sed -ni p f", "sed -si p f", "sed -in p f", "sed -Ei p f",
		"sed --in-place p f", "sed --in-place=.b p f", "sed --in p f", "sed p -i f", "sed -n -i -e p f"}, Approve},
	{"sed GNU addresses", []string{"sed -n '/x/,+3p' f", "sed -n '/x/,~4p' f", "sed -n '0,/re/p' f", "sed -n '1~2p' f", "sed -n '$!N;P;D' f",
		"sed -n '\\%x%Ip' f"}, Allow},
	{"sed harmless outputs and reads", []string{"sed 's/x/y/w /dev/stdout' f", "sed -n 'w /dev/stderr' f", "sed '1r /etc/hostname' f",
		"sed -s -z -E -n --debug --sandbox p f"}, Allow},
	{"awk getline from a computed file", []string{`awk 'BEGIN{getline < ("/etc/" "shadow"); print}'`, `awk 'BEGIN{getline x < "/etc/" "shadow"}'`,
		`awk 'BEGIN{f="/etc/shadow"; getline x < f}'`, `awk '{getline x < $1}' f`, `awk 'BEGIN{getline x < "/etc/sh\141dow"}'`,
		`awk 'BEGIN{getline x < "shadow" ".bak"}'`}, Approve},
	{"awk environment and special arrays", []string{`awk 'BEGIN{print ENVIRON["HOME"]}'`, `awk 'BEGIN{for(k in ENVIRON) print k}'`,
		`gawk 'BEGIN{print PROCINFO["pid"]}'`, `gawk 'BEGIN{print SYMTAB["ENV" "IRON"]["X"]}'`, `awk 'BEGIN{ARGV[1]="/etc/x"; ARGC=2}{print}'`,
		`awk 'BEGIN{delete ARGV}{print}' f`}, Approve},
	{"awk sockets, commands, files", []string{`gawk 'BEGIN{s="/inet/tcp/0/h/80"; print "x" |& s}'`, `gawk 'BEGIN{getline x < "/inet/tcp/0/h/80"}'`,
		`awk 'BEGIN{system("id")}'`, `awk 'BEGIN{print > "out"}'`, `awk 'BEGIN{close("x")}'`, "awk -f x.awk f", "gawk -l filefuncs 'BEGIN{}'",
		"gawk -i inplace '{print}' f", "gawk -E x.awk", `gawk '@load "x"'`}, Approve},
	{"awk that only reads", []string{`awk 'BEGIN{while ((getline l < "/etc/hosts") > 0) n++; print n}'`, `awk 'BEGIN{getline x < "/etc/hostname"}'`,
		`awk -F: '{print $1}' /etc/passwd`}, Allow},
	{"jq environment", []string{"jq -n env", "jq -n '$ENV'", "jq -n '$ENV.HOME'", "jq -n '$ ENV'", `jq -n '"\(env.HOME)"'`,
		`jq -n '"a\("b\(env)")"'`, "jq -n '{a: env}'", "jq -n '# \"\nenv # \"'", "jq -n '# x \\\nenv'"}, Approve},
	{"jq files", []string{"jq -f x.jq f", "jq -nf x.jq", "jq --from-file x.jq", `jq -n 'import "x" as $x; $x'`, `jq -n 'include "x"; .'`,
		`jq -n '"x"|modulemeta'`, "jq --rawfile k /etc/shadow -n '$k'", "jq --bogus ."}, Approve},
	{"jq that only reads its input", []string{"jq . f", "jq '.env' f", `jq '.[] | select(.n == "env")' f`, "jq --arg env x '$env' f",
		"jq -nr '$__loc__'", `jq -r '"\(.a) \(.env)"' f`}, Allow},
	{"ps environment", []string{"ps e", "ps axe", "ps auxe", "ps eww", "ps ax eo pid,args", "ps axeU root", "ps -ef e", "ps -o pid,environ",
		"ps --format=environ", "ps --format environ"}, Approve},
	{"ps without environment", []string{"ps aux", "ps -ef", "ps axOe", "ps -eo pid,comm", "ps axo pid,cmd", "ps -p 1 -o comm="}, Allow},
	{"redis-cli stdin, files, repeats", []string{"redis-cli -X info info", "redis-cli -x set k", "redis-cli --pipe", "redis-cli --eval x.lua",
		"redis-cli --rdb dump.rdb", "redis-cli --functions-rdb f.rdb", "redis-cli -r 3 ping", "redis-cli --replica",
		"redis-cli --cluster call 127.0.0.1:7000 flushall", "redis-cli"}, Approve},
	{"redis-cli secrets", []string{"redis-cli config get requirepass", "redis-cli CONFIG GET MasterAuth", "redis-cli config get '*'",
		"redis-cli config get '?equirepass'", "redis-cli config get maxmemory '[r]equirepass'", "redis-cli acl list", "redis-cli auth x"}, Approve},
	{"redis-cli to a port without a host", []string{"redis-cli -p 6380 ping", "redis-cli -p 8080 info"}, Approve},
	{"redis-cli reads", []string{"redis-cli ping", "redis-cli info", "redis-cli -p 6379 ping", "redis-cli config get maxmemory",
		"redis-cli slowlog get 10"}, Allow},
}

// TestToolGrammarClasses: each class of issue 24 in sed, awk, jq, ps and
// redis-cli gets its verdict in every spelling.
func TestToolGrammarClasses(t *testing.T) {
	t.Parallel()
	p := defaultPolicy(t)
	for _, tc := range toolCases {
		for _, cmd := range tc.cmds {
			if d := p.Check(Target{Host: "web-1"}, cmd); d.Action != tc.want {
				t.Errorf("%s: %q: %s, want %s\n  %s", tc.class, cmd, d.Action, tc.want, strings.Join(d.Reasons, "\n  "))
			}
		}
	}
}

// TestToolCorpora: testdata/bypass_tools.txt (verdict, command) on an SSH
// host and the bot's host; testdata/harmless_tools.txt all allowed.
func TestToolCorpora(t *testing.T) {
	t.Parallel()
	p := fleetPolicy(t)
	bypass := readCorpus(t, "testdata/bypass_tools.txt")
	for _, line := range bypass {
		verdict, cmd, _ := strings.Cut(line, " ")
		want, err := ParseAction(verdict)
		if err != nil || want == Allow {
			t.Fatalf("%q: the line must start with approve or deny", line)
		}
		if q, ok := strings.CutPrefix(cmd, "q:"); ok {
			if cmd, err = strconv.Unquote(q); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
		}
		for _, host := range []string{"web-1", "local"} {
			if d := p.Check(Target{Host: host}, cmd); d.Action != want {
				t.Errorf("on %s: %q: %s, want %s\n  %s", host, cmd, d.Action, want, strings.Join(d.Reasons, "\n  "))
			}
		}
	}
	harmless := readCorpus(t, "testdata/harmless_tools.txt")
	for _, cmd := range harmless {
		if d := p.Check(Target{Host: "web-1"}, cmd); d.Action != Allow {
			t.Errorf("%q: %s, want allow\n  %s", cmd, d.Action, strings.Join(d.Reasons, "\n  "))
		}
	}
	if len(bypass) < 100 || len(harmless) < 50 {
		t.Errorf("the corpora hold %d and %d lines, want at least 100 and 50", len(bypass), len(harmless))
	}
	t.Logf("%d bypass lines on 2 hosts, %d harmless lines", len(bypass), len(harmless))
}

// envMarker is a value only the environment of the tools run below holds.
const envMarker = "zz-env-marker-24"

// runWithMarker runs argv confined, with envMarker in its environment
// and stdin from /dev/null; it returns what it printed.
func runWithMarker(t *testing.T, argv ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a guard against a hung process, not a wait
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env, cmd.SysProcAttr = "/", []string{"LC_ALL=C.UTF-8", "TOKEN=" + envMarker}, confined()
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// TestAllowedJqAndAwkPrintNoEnvironment: the real jq and mawk, run with
// a marker in their environment, never print it for a filter or program
// the policy allows, and do print it for the dumps it refuses (so the
// check can fail).
func TestAllowedJqAndAwkPrintNoEnvironment(t *testing.T) {
	t.Parallel()
	p := defaultPolicy(t)
	progs := [][]string{
		{"jq", "-n", "env"}, {"jq", "-n", "$ENV"}, {"jq", "-n", "$ENV.TOKEN"}, {"jq", "-n", `"\(env)"`}, {"jq", "-n", `"a\("b\(env.TOKEN)")"`},
		{"jq", "-n", "{a: env}"}, {"jq", "-n", "# \"\nenv # \""}, {"jq", "-n", "$__loc__"}, {"jq", "-n", `{"env": 1} | .env`},
		{"jq", "-n", "[1,2] | add"}, {"jq", "-nr", `"env"`}, {"jq", "-n", "$ ENV"}, {"jq", "-n", "env.TOKEN"},
		{"mawk", `BEGIN { print ENVIRON["TOKEN"] }`}, {"mawk", `BEGIN { for (k in ENVIRON) print ENVIRON[k] }`},
		{"mawk", `BEGIN { print "ENVIRON" }`}, {"mawk", `BEGIN { x["ENVIRON"] = 1; for (k in x) print k }`},
	}
	allowed, leaked := 0, 0
	for _, argv := range progs {
		out := runWithMarker(t, argv...)
		leaks := strings.Contains(out, envMarker)
		if leaks {
			leaked++
		}
		if d := p.Check(Target{Host: "web-1"}, shellQuote(argv)); d.Action == Allow {
			allowed++
			if leaks {
				t.Errorf("the policy allows %q, which prints the environment:\n%s", argv, out)
			}
		}
	}
	if allowed < 5 || leaked < 8 {
		t.Errorf("%d programs allowed, %d printed the environment: too few to compare", allowed, leaked)
	}
	t.Logf("%d programs: %d allowed, %d print the environment when run", len(progs), allowed, leaked)
}

// TestAllowedPsPrintsNoEnvironment: real ps, with a process whose
// environment holds a marker, never prints it for arguments the policy
// allows; it does for ps e.
func TestAllowedPsPrintsNoEnvironment(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	holder := exec.CommandContext(ctx, "sleep", "600") // killed by cancel when the test ends
	holder.Env = append(os.Environ(), "TOKEN="+envMarker)
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		_ = holder.Wait() // killed on purpose
	}()
	p := defaultPolicy(t)
	leaked := 0
	for _, args := range []string{"axe", "ax eo pid,args", "axeww", "-ef e", "ax -o pid,args e", "aux", "-ef", "axOe", "-eo pid,args", "axo pid,cmd", "ax"} {
		argv := append([]string{"ps"}, strings.Fields(args)...)
		out, _ := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
		leaks := strings.Contains(string(out), envMarker)
		if leaks {
			leaked++
		}
		if d := p.Check(Target{Host: "web-1"}, strings.Join(argv, " ")); d.Action == Allow && leaks {
			t.Errorf("the policy allows %q, which prints processes' environments", argv)
		}
	}
	if leaked < 3 {
		t.Errorf("only %d ps forms printed the marker: the check could not fail", leaked)
	}
}

// shellQuote joins argv as a bash command line, each word single-quoted.
func shellQuote(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
