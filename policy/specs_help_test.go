package policy

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// helpOption is an option as a tool's --help shows it.
type helpOption struct {
	name string // a letter, or a long name
	kind valueKind
}

// helpOptionRE matches "-x", "--name", "--name=VALUE", "--name[=VALUE]",
// "--name VALUE" and "--name <value>" at the start of a help line.
var helpOptionRE = regexp.MustCompile(`(?:^|[\s,])(--?)([A-Za-z0-9][\w.-]*)([ ]?\[=[^\]\s]*\]|\[[A-Z<][^\]]*\]|[ ]?=\S*|[ ][<\[]?[A-Z][A-Z0-9_-]*[>\]]?(?:[\s,]|$)|[ ]<[^>]+>|[ ]\[\w+://\]\S*)?`)

// helpDescription starts the description after an option list whose
// columns are one space apart (curl's "--trace-ascii <file> Like …").
var helpDescription = regexp.MustCompile(`\s[A-Z][a-z]`)

// helpOptions reads the options a GNU-style --help lists: on each line
// that starts with a dash, the options before the description. A short
// option takes the kind of the long option on its line.
func helpOptions(text string) []helpOption {
	var out []helpOption
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "-") {
			continue
		}
		head, _, _ := strings.Cut(line, "  ")
		if loc := helpDescription.FindStringIndex(head); loc != nil {
			head = head[:loc[0]]
		}
		var shorts []string
		kind := noValue
		for _, m := range helpOptionRE.FindAllStringSubmatch(head, -1) {
			k := noValue
			switch v := strings.TrimSpace(m[3]); {
			case strings.HasPrefix(v, "[="):
				k = optionalValue
			case strings.HasPrefix(v, "[") && !strings.Contains(v, "://"):
				k = optionalValue
			case v != "":
				k = needsValue
			}
			if m[1] == "-" && len(m[2]) == 1 {
				shorts = append(shorts, m[2])
				kind = max(kind, k)
				continue
			}
			if m[1] == "--" {
				out = append(out, helpOption{m[2], k})
				kind = max(kind, k)
			}
		}
		for _, s := range shorts {
			out = append(out, helpOption{s, kind})
		}
	}
	return out
}

// pflagHelpOption matches a cobra/pflag help line: "-A, --all=false:",
// "--tail=-1:", "--as-group=[]:".
var pflagHelpOption = regexp.MustCompile(`^\s+(?:-([A-Za-z0-9]), )?--([\w-]+)=(.*):$`)

// pflagHelpOptions reads a cobra command's --help: a default of true or
// false marks a boolean flag, any other default a value.
func pflagHelpOptions(text string) []helpOption {
	var out []helpOption
	for _, line := range strings.Split(text, "\n") {
		m := pflagHelpOption.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		k := needsValue
		if m[3] == "false" || m[3] == "true" {
			k = noValue
		}
		out = append(out, helpOption{m[2], k})
		if m[1] != "" {
			out = append(out, helpOption{m[1], k})
		}
	}
	return out
}

// specKind is how spec reads the option name, and whether it knows it.
func specKind(spec optSpec, name string) (valueKind, bool) {
	if len(name) == 1 {
		return spec.shortKind(name[0])
	}
	for _, l := range spec.long {
		if n, k := splitLong(l); n == name {
			return k, true
		}
	}
	return 0, false
}

// TestSpecsMatchInstalledHelp checks the specs of the tools installed
// here against their own --help: every option both know takes a value in
// the spec exactly when the tool says it does. (An option the spec does
// not list needs approval, so only disagreements are errors.) The tools
// checked are listed here; each must be installed.
func TestSpecsMatchInstalledHelp(t *testing.T) {
	t.Parallel()
	tools := []struct {
		name string
		help []string
		spec optSpec
		// helpWrong are options whose --help line misleads the reader
		// above, with why.
		helpWrong map[string]string
	}{
		{"sort", []string{"--help"}, sortSpec, map[string]string{"check": "--check=WHEN is optional: the help lists both forms",
			"c": "-c is --check without a value", "C": "-C is --check=quiet, without a value"}},
		{"uniq", []string{"--help"}, uniqSpec, nil},
		{"file", []string{"--help"}, fileSpec, map[string]string{"parameter": "-P name=value: file.c's getopt string has P:",
			"P": "-P name=value: file.c's getopt string has P:"}},
		{"lastlog", []string{"--help"}, lastlogSpec, nil},
		{"sed", []string{"--help"}, sedSpec, nil},
		{"tar", []string{"--help"}, tarSpec, nil},
		{"date", []string{"--help"}, dateSpec, nil},
		{"dmesg", []string{"--help"}, dmesgSpec, nil},
		{"sysctl", []string{"--help"}, sysctlSpec, nil},
		{"ss", []string{"--help"}, ssSpec, map[string]string{"net": "-N NSNAME: the help omits the value", "N": "-N NSNAME: the help omits the value"}},
		{"journalctl", []string{"--help"}, journalctlSpec, nil},
		{"systemctl", []string{"--help"}, systemctlSpec, nil},
		{"loginctl", []string{"--help"}, loginctlSpec, nil},
		{"timedatectl", []string{"--help"}, timedatectlSpec, nil},
		{"hostnamectl", []string{"--help"}, hostnamectlSpec, nil},
		{"xargs", []string{"--help"}, xargsSpec, nil},
		{"watch", []string{"--help"}, watchSpec, nil},
		{"top", []string{"--help"}, topSpec, nil},
		{"curl", []string{"--help", "all"}, curlSpec, map[string]string{"help": "--help CATEGORY only prints help", "h": "-h CATEGORY only prints help"}},
		{"timeout", []string{"--help"}, wrappers["timeout"].opts, nil},
		{"env", []string{"--help"}, wrappers["env"].opts, nil},
		{"nice", []string{"--help"}, wrappers["nice"].opts, nil},
		{"stdbuf", []string{"--help"}, wrappers["stdbuf"].opts, nil},
		{"ionice", []string{"--help"}, wrappers["ionice"].opts, nil},
	}
	for _, v := range [][]string{{"get"}, {"logs"}, {"describe"}, {"top", "pod"}, {"top", "node"}, {"explain"}, {"events"}, {"wait"}, {"api-resources"}, {"rollout", "status"}} {
		// kubectl VERB --help lists the verb's flags; kubectl options the
		// global ones, which every verb's spec includes.
		tools = append(tools, struct {
			name      string
			help      []string
			spec      optSpec
			helpWrong map[string]string
		}{"kubectl", append(v, "--help"), kubectlSpec(v[0]), nil})
	}
	tools = append(tools, struct {
		name      string
		help      []string
		spec      optSpec
		helpWrong map[string]string
	}{"kubectl", []string{"options"}, kubectlSpec("get"), nil})
	for _, tool := range tools {
		out, err := exec.Command(tool.name, tool.help...).CombinedOutput()
		if err != nil && len(out) == 0 {
			t.Errorf("%s %s: %v", tool.name, strings.Join(tool.help, " "), err)
			continue
		}
		opts := helpOptions(string(out))
		if tool.spec.family == pflag {
			opts = pflagHelpOptions(string(out))
		}
		if len(opts) < 3 {
			t.Errorf("%s %s: read only %d options from its help", tool.name, tool.help[0], len(opts))
		}
		checked := 0
		for _, o := range opts {
			if _, skip := tool.helpWrong[o.name]; skip {
				continue
			}
			k, known := specKind(tool.spec, o.name)
			if !known {
				continue
			}
			checked++
			if (k == noValue) != (o.kind == noValue) {
				t.Errorf("%s %s %s: the spec says it takes %s, the tool's help says %s", tool.name, tool.help[0], dashed(o.name), kindText(k), kindText(o.kind))
			}
		}
		t.Logf("%s %s: %d options in its help, %d checked against the spec", tool.name, tool.help[0], len(opts), checked)
	}
}

func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

func kindText(k valueKind) string {
	return [...]string{"no value", "a value", "an optional value"}[k]
}
