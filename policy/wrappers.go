package policy

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// wrapSpec describes a program that runs the command given after its own
// options; the inner command is classified as if it stood alone.
type wrapSpec struct {
	opts optSpec
	// skip is how many operands come before the command (timeout's
	// duration).
	skip int
	// refuse maps options that make the wrapper itself risky to why.
	refuse map[string]string
	// env reads NAME=VALUE words before the command.
	env bool
	// always is why the wrapper needs approval whatever its options.
	always string
}

// wrappers are the plain wrapper programs.
var wrappers = map[string]wrapSpec{
	"sudo": {opts: optSpec{short: "Aa:BbC:c:D:Eeg:Hh::iKklnPp:R:r:SsT:t:U:u:Vv", long: []string{"askpass", "auth-type=", "background", "bell",
		"close-from=", "login-class=", "chdir=", "preserve-env=?", "edit", "group=", "set-home", "help", "host=", "login", "remove-timestamp",
		"reset-timestamp", "list", "non-interactive", "preserve-groups", "prompt=", "chroot=", "role=", "stdin", "shell", "type=",
		"command-timeout=", "other-user=", "user=", "version", "validate"}},
		refuse: map[string]string{"i": "sudo -i runs a login shell", "s": "sudo -s runs a shell", "e": "sudo -e edits files", "login": "sudo -i runs a login shell",
			"shell": "sudo -s runs a shell", "edit": "sudo -e edits files", "E": "sudo -E passes the environment on", "preserve-env": "sudo --preserve-env passes the environment on",
			"R": "sudo -R changes the root directory", "chroot": "sudo -R changes the root directory",
			"A": "sudo -A runs an askpass program", "askpass": "sudo -A runs an askpass program",
			"b": "sudo -b leaves the command running in the background", "background": "sudo -b leaves the command running in the background",
			"v": "sudo -v refreshes the cached credentials", "validate": "sudo -v refreshes the cached credentials",
			"k": "sudo -k changes the cached credentials", "reset-timestamp": "sudo -k changes the cached credentials",
			"K": "sudo -K removes the cached credentials", "remove-timestamp": "sudo -K removes the cached credentials"}},
	"doas":     {opts: optSpec{short: "a:C:Lnsu:"}, refuse: map[string]string{"s": "doas -s runs a shell", "C": "doas -C reads a config file"}},
	"env":      {opts: optSpec{short: "i0u:C:S:v", long: []string{"ignore-environment", "null", "unset=", "chdir=", "split-string=", "block-signal=?", "default-signal=?", "ignore-signal=?", "list-signal-handling", "debug", "help", "version"}}, env: true, refuse: map[string]string{"S": "env -S splits a string into a command", "split-string": "env -S splits a string into a command"}},
	"nice":     {opts: optSpec{short: "n:", long: []string{"adjustment=", "help", "version"}}},
	"nohup":    {opts: optSpec{long: []string{"help", "version"}}, always: backgroundWhy("nohup", "ignores the hang-up signal that ends a command's processes")},
	"time":     {opts: optSpec{short: "af:o:pqvV", long: []string{"append", "format=", "output=", "portability", "quiet", "verbose", "help", "version"}}, refuse: map[string]string{"o": "time -o writes a file", "output": "time -o writes a file"}},
	"timeout":  {opts: optSpec{short: "fk:ps:v", long: []string{"foreground", "kill-after=", "preserve-status", "signal=", "verbose", "help", "version"}}, skip: 1},
	"stdbuf":   {opts: optSpec{short: "i:o:e:", long: []string{"input=", "output=", "error=", "help", "version"}}},
	"ionice":   {opts: optSpec{short: "c:n:p:P:tu:hV", long: []string{"class=", "classdata=", "pid=", "pgid=", "ignore", "uid=", "help", "version"}}, refuse: map[string]string{"p": "ionice -p changes another process", "P": "ionice -P changes other processes", "u": "ionice -u changes other processes", "pid": "ionice -p changes another process", "pgid": "ionice -P changes other processes", "uid": "ionice -u changes other processes"}},
	"setsid":   {opts: optSpec{short: "cfwhV", long: []string{"ctty", "fork", "wait", "help", "version"}}, always: backgroundWhy("setsid", "moves the command to a session of its own, out of reach of the cleanup that ends the command's processes")},
	"builtin":  {},
	"unbuffer": {opts: optSpec{short: "p"}},
	"chronic":  {opts: optSpec{short: "ev"}},
}

// wrapperHandler classifies a wrapper and the command it runs.
func wrapperHandler(spec wrapSpec) handler {
	return func(w *walker, c *Command, args []arg, sc scope) {
		opts := spec.opts // a copy: handlers run concurrently
		opts.stopAtOperand = true
		p := opts.parseWrapper(args)
		if spec.always != "" {
			c.add(Approve, spec.always)
		}
		for _, name := range slices.Sorted(maps.Keys(spec.refuse)) {
			if p.has(name) {
				c.add(Approve, spec.refuse[name])
			}
		}
		if p.unknown != "" {
			c.add(Approve, p.unknown)
		}
		inner := p.rest
		if spec.env {
			inner = w.envAssignments(c, inner)
			if len(inner) == 0 {
				c.add(Approve, "env without a command prints the whole environment, which holds credentials")
			}
		}
		for _, o := range p.findAll("chdir", map[bool]string{true: "C", false: "D"}[spec.env]) {
			w.chdir(arg{src: o.value, val: o.value})
		}
		if len(inner) < spec.skip {
			inner = nil
		} else {
			inner = inner[spec.skip:]
		}
		w.wrapped(c, args, inner, sc)
	}
}

// wrapped records a wrapper (config rules see it too) and classifies
// what it runs.
func (w *walker) wrapped(c *Command, args, inner []arg, sc scope) {
	w.configRules(c, args)
	if len(c.Reasons) == 0 && len(inner) == 0 {
		c.add(Allow, "runs nothing else")
	} else if len(c.Reasons) == 0 {
		c.add(Allow, "runs the command after it, classified on its own")
	}
	w.record(*c)
	w.classify(inner, sc.inside(c.Program))
}

// envAssignments checks env's NAME=VALUE words and returns the command
// after them.
func (w *walker) envAssignments(c *Command, args []arg) []arg {
	for len(args) > 0 {
		name, val, ok := strings.Cut(args[0].val, "=")
		if !args[0].static() || !ok || name == "" {
			break
		}
		if !safeEnv(name, val) {
			c.add(Approve, fmt.Sprintf("sets %s, which changes the environment of the command", name))
		}
		args = args[1:]
	}
	return args
}

// xargs runs its command with words read from standard input appended,
// or put in place of a replacement string.
func (w *walker) xargs(c *Command, args []arg, sc scope) {
	p := xargsSpec.parseWrapper(args)
	if p.unknown != "" {
		c.add(Approve, p.unknown)
	}
	w.fileOptionReads(c, args) // -a FILE
	inner := p.rest
	if len(inner) == 0 {
		inner = []arg{{src: "echo", val: "echo"}}
	}
	if p.has("process-slot-var") {
		c.add(Approve, "xargs --process-slot-var sets a variable in the environment of what it runs")
	}
	input := arg{src: "{input}", dynamic: "words xargs reads from its input"}
	if os := p.findAll("I", "i", "replace"); len(os) > 0 {
		// The last replacement string wins; every one is marked, so that
		// no word xargs may fill in is taken as known.
		for _, o := range os {
			inner = replaced(inner, orText(o.value, "{}"), input)
		}
	} else {
		inner = append(inner[:len(inner):len(inner)], input)
	}
	w.wrapped(c, args, inner, sc)
}

// replaced marks the words holding xargs' replacement string as dynamic.
func replaced(args []arg, repl string, input arg) []arg {
	out := make([]arg, len(args))
	for i, a := range args {
		out[i] = a
		if strings.Contains(a.val, repl) || strings.Contains(a.src, repl) {
			out[i].dynamic, out[i].src = input.dynamic, a.src
			out[i].pat = strings.ReplaceAll(a.pattern(), repl, string(anyString))
		}
	}
	return out
}

// watch joins its operands and runs them with sh -c (or as argv with -x).
func (w *walker) watch(c *Command, args []arg, sc scope) {
	p := watchSpec.parseWrapper(args)
	if p.unknown != "" {
		c.add(Approve, p.unknown)
	}
	if p.has("x", "exec") {
		w.wrapped(c, args, p.rest, sc)
		return
	}
	w.joinedScript(c, args, p.rest, sc, shEither) // watch runs sh -c
}

// ssh runs the words after the host as a command line on the remote host.
func (w *walker) ssh(c *Command, args []arg, sc scope) {
	spec := optSpec{short: "1246ab:c:e:fgi:kl:m:no:p:qstvxAB:CD:E:F:GI:J:KL:MNO:PQ:R:S:TVw:W:XYy", stopAtOperand: true}
	p := sshOptions(spec, args)
	if p.unknown != "" {
		c.add(Approve, p.unknown)
	}
	for _, o := range p.opts {
		if why := sshOption(o); why != "" {
			c.add(Approve, why)
		}
	}
	if len(p.rest) > 0 {
		w.sshDestination(c, p.rest[0], p)
	}
	if len(p.rest) < 2 {
		c.add(Approve, "ssh without a command opens an interactive shell")
		w.wrapped(c, args, nil, sc)
		return
	}
	// The remote login shell reads it: bash or a POSIX sh, most often.
	w.joinedScript(c, args, p.rest[1:], sc, shEither)
}

// sshOptions reads ssh's command line as ssh does: after the
// destination it reads options again, up to the first operand (`ssh host
// -o ProxyCommand=… cmd`), unless "--" came before the destination. rest
// is the destination and the command.
func sshOptions(spec optSpec, args []arg) parsed {
	p := spec.parseWrapper(args)
	used := len(args) - len(p.rest)
	if len(p.rest) < 2 || (used > 0 && args[used-1].static() && args[used-1].val == "--") {
		return p
	}
	q := spec.parseWrapper(p.rest[1:])
	p.opts = append(p.opts, q.opts...)
	p.unknown = orText(p.unknown, q.unknown)
	p.rest = append([]arg{p.rest[0]}, q.rest...)
	return p
}

func sshOption(o opt) string {
	switch o.name {
	case "L", "R", "D", "W", "w":
		return "ssh -" + o.name + " opens a tunnel"
	case "F", "E", "S", "O", "I", "i":
		return "ssh -" + o.name + " uses or writes files the policy cannot see"
	case "A", "X", "Y", "K":
		return "ssh -" + o.name + " forwards the agent, the display or credentials to the remote host"
	case "J":
		return "ssh -J connects through another host"
	case "M", "f":
		return "ssh -" + o.name + " leaves a connection running in the background"
	case "o":
		return "ssh -o " + o.value + " sets an option: many run programs or forward access"
	}
	return ""
}

// joinedScript classifies words a program joins with spaces and hands to
// a shell that reads them in dialects.
func (w *walker) joinedScript(c *Command, args, words []arg, sc scope, dialects []syntax.LangVariant) {
	parts := make([]string, len(words))
	for i, a := range words {
		if !a.static() && a.dynamic != "" {
			c.add(Approve, fmt.Sprintf("the remote or inner command is computed at run time (%s)", a.dynamic))
		}
		parts[i] = a.show()
	}
	c.add(Allow, "runs the command line after it, classified on its own")
	w.wrapped(c, args, nil, sc)
	if len(parts) > 0 {
		w.script(strings.Join(parts, " "), sc.deeper(c.Program, dialects))
	}
}

// commandBuiltin: command -v/-V only looks a name up; otherwise it runs
// the command, skipping functions.
func (w *walker) commandBuiltin(c *Command, args []arg, sc scope) {
	p := optSpec{short: "pvV", stopAtOperand: true}.parse(args)
	if p.has("v", "V") && p.unknown == "" {
		c.add(Allow, "only looks a command up")
		w.record(*c)
		return
	}
	if p.unknown != "" {
		c.add(Approve, p.unknown)
	}
	w.wrapped(c, args, p.rest, sc)
}

// execBuiltin replaces the shell with its command; without one it only
// applies redirections, which are judged on their own.
func (w *walker) execBuiltin(c *Command, args []arg, sc scope) {
	p := optSpec{short: "cla:", stopAtOperand: true}.parse(args)
	if p.unknown != "" {
		c.add(Approve, p.unknown)
	}
	w.wrapped(c, args, p.rest, sc)
}

// busybox runs the applet named by its first operand.
func (w *walker) busybox(c *Command, args []arg, sc scope) {
	if len(args) == 0 || (args[0].static() && slices.Contains([]string{"--list", "--list-full", "--help"}, args[0].val) && len(args) == 1) {
		c.add(Allow, "lists its applets")
		w.record(*c)
		return
	}
	if args[0].static() && strings.HasPrefix(args[0].val, "-") {
		// --install links every applet into a directory, shadowing ls, ps
		// and sh for every later command.
		c.add(Approve, fmt.Sprintf("busybox %s installs or runs something other than an applet", args[0].val))
		w.record(*c)
		return
	}
	w.wrapped(c, args, args, sc)
}
