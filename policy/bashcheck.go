package policy

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The classifier parses with mvdan.cc/sh, which is not bash: where the two
// disagree (a comment ending in a backslash, a continuation, a
// here-document's end), a line can run other commands than those
// classified. So before a line is allowed, bash itself is asked how it
// reads every bash script in it, and the line needs approval unless bash
// finds the same simple commands.

// bashTimeout bounds how long bash may take to read one script.
const bashTimeout = 5 * time.Second

// bashReadingOutput bounds what bash may print of its reading.
const bashReadingOutput = 1 << 20

// bashWorkers bounds how many bash processes read scripts at once.
var bashWorkers = make(chan struct{}, 4)

// bashParse is how bash reads a script: the body of a function wrapping
// it, as `declare -f` prints it back.
type bashParse struct {
	body string
	ok   bool   // bash parsed the script as the function's body
	why  string // when !ok: why, for a person to read
}

// bashReader asks one bash binary for its readings, remembering the last
// ones (the same lines come back: schedules, retries, a thread's reruns).
type bashReader struct {
	path string // empty when no bash is installed
	mu   sync.Mutex
	seen map[string]bashParse
}

// maxRemembered bounds the readings a bashReader keeps.
const maxRemembered = 2048

func newBashReader() *bashReader {
	path, err := exec.LookPath("bash")
	if err != nil {
		path = ""
	}
	return &bashReader{path: path, seen: map[string]bashParse{}}
}

// read returns bash's reading of src, from memory when it was read before.
func (b *bashReader) read(src string) bashParse {
	if b == nil { // a Policy not made by NewPolicy
		return bashParse{why: "how bash reads the command was not confirmed"}
	}
	b.mu.Lock()
	r, ok := b.seen[src]
	b.mu.Unlock()
	if ok {
		return r
	}
	r = b.ask(src)
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.seen) >= maxRemembered {
		for k := range b.seen { // forget any one
			delete(b.seen, k)
			break
		}
	}
	b.seen[src] = r
	return r
}

// bashProbe wraps a script in a function bash never calls and prints the
// function back. The body starts with ":" as bash refuses an empty one
// (a line that is only a comment), and ends with probeEnd. It never runs what the script holds, and is fenced
// several times over in case the script escapes the function's braces:
// with extdebug and functrace, a DEBUG trap skips every simple command
// but the final declare, in subshells and substitutions too; the shell is
// restricted (no output redirections, no cd, no command names with a
// slash), and PATH names no directory, so only builtins could run. The
// process also runs without an environment, as nobody when opsbot runs
// as root, in a process group killed after bashTimeout.
func bashProbe(src, end string) string {
	return "shopt -s extdebug\nset -T\ntrap '[[ $BASH_COMMAND == \"declare -f opsbot_parsed\" ]]' DEBUG\nset -r\n" +
		"opsbot_parsed() {\n:\n" + src + "\n" + end + "\n}\ndeclare -f opsbot_parsed\n"
}

// probeEnd is the probe's last command, unique to each probe: a script
// that closes the function's braces early leaves it out of the function
// bash prints, which is how that is told from a complete reading.
func probeEnd() string {
	return ": opsbot_end_" + rand.Text()
}

// ask runs bash on src's probe and reads its answer.
func (b *bashReader) ask(src string) bashParse {
	if b.path == "" {
		return bashParse{why: "bash is not installed on the bot's host, so how bash reads the command could not be confirmed"}
	}
	if strings.ContainsRune(src, 0) {
		return bashParse{why: "the command holds a NUL byte, which no shell is given"}
	}
	end := probeEnd()
	out, stderr, why := b.probe(src, end)
	if why != "" {
		return bashParse{why: why}
	}
	return parseProbeOutput(out, stderr, end)
}

// probe runs bash on src's probe and returns what it printed; why is set
// when bash could not answer.
func (b *bashReader) probe(src, end string) (out, stderr, why string) {
	bashWorkers <- struct{}{}
	defer func() { <-bashWorkers }()
	ctx, cancel := context.WithTimeout(context.Background(), bashTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.path, "--norc", "--noprofile", "-c", bashProbe(src, end))
	cmd.Env = []string{"PATH=/nonexistent/opsbot", "LC_ALL=C.UTF-8"}
	cmd.Dir = "/"
	cmd.SysProcAttr = probeAttr()
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var stdout, errout limitedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &errout
	err := cmd.Run()
	switch {
	case ctx.Err() != nil:
		return "", "", "bash took too long to read the command"
	case err != nil && !errors.As(err, new(*exec.ExitError)):
		return "", "", "bash could not be started to confirm how it reads the command"
	}
	return stdout.String(), errout.String(), ""
}

// parseProbeOutput takes the function's body out of what the probe printed.
func parseProbeOutput(out, stderr, end string) bashParse {
	const head, tail = "opsbot_parsed () \n{ \n", "\n}\n"
	if !strings.HasPrefix(out, head) || !strings.HasSuffix(out, tail) || stderr != "" {
		why := "bash does not read it as one complete command line"
		if strings.Contains(stderr, "syntax error") {
			why = "bash finds a syntax error in it"
		}
		return bashParse{why: why}
	}
	body := strings.TrimSuffix(strings.TrimPrefix(out, head), "}\n")
	body, closed := strings.CutSuffix(body, " "+end+"\n")
	for _, colon := range []string{"    :;\n", "    :\n"} {
		if rest, ok := strings.CutPrefix(body, colon); ok && closed {
			return bashParse{body: rest, ok: true}
		}
	}
	return bashParse{why: "bash does not read it as one complete command line"}
}

// probeAttr puts the probe in its own process group, as nobody when
// opsbot runs as root.
func probeAttr() *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setpgid: true}
	if os.Getuid() == 0 {
		attr.Credential = &syscall.Credential{Uid: 65534, Gid: 65534}
	}
	return attr
}

// limitedBuffer keeps the first bashReadingOutput bytes written to it.
type limitedBuffer struct{ b strings.Builder }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := bashReadingOutput - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string { return l.b.String() }

// confirmWithBash turns an allow into approve unless bash reads every
// bash script of the line as the classifier did.
func (p *Policy) confirmWithBash(t Target, w *walker) {
	for _, src := range slices.Compact(slices.Sorted(slices.Values(w.bashScripts))) {
		if why := p.bashDisagrees(t, src); why != "" {
			w.verdict.add(Approve, why)
			return
		}
	}
}

// bashDisagrees says why bash's reading of src is not the classifier's;
// empty when they agree.
func (p *Policy) bashDisagrees(t Target, src string) string {
	r := p.bash.read(src)
	if !r.ok {
		return r.why
	}
	ours, theirs := p.walkOnly(t, src), p.walkOnly(t, bashRendering(src, r.body))
	if ours.Action != theirs.Action || !sameReading(ours, theirs) {
		return "bash reads the command differently from the classifier (bash sees: " + strings.Join(programsOf(theirs), ", ") + "), so it needs a person to look at it"
	}
	return ""
}

// walkOnly classifies src on its own, without asking bash.
func (p *Policy) walkOnly(t Target, src string) Decision {
	w := &walker{policy: p, target: t}
	w.script(src, scope{})
	return w.decision()
}

// programsOf lists the commands a decision found, as written.
func programsOf(d Decision) []string {
	out := make([]string, 0, len(d.Commands))
	for _, c := range d.Commands {
		out = append(out, shorten(strings.Join(c.Argv, " "), 60))
	}
	return out
}

// shorten cuts s to n characters, marking the cut.
func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// sameReading reports whether two decisions found the same simple
// commands: the same number, each found inside the same wrappers, with
// the same number of words and the same value for every word both
// resolved. A word one side leaves unresolved (the classifier does not
// decode $'\x72m'; bash's rendering shows 'rm') matches any word: it is
// classified as computed at run time, never as a value it is not.
func sameReading(a, b Decision) bool {
	return slices.EqualFunc(a.Commands, b.Commands, func(x, y Command) bool {
		return slices.Equal(x.Via, y.Via) && slices.EqualFunc(x.words, y.words, func(v, w arg) bool {
			return v.dynamic != "" || w.dynamic != "" || v.val == w.val
		})
	})
}

// bashRendering undoes the one place where bash's rendering is not what
// bash parses back: it names a simple coproc COPROC (coproc COPROC cmd),
// which bash would read as the command COPROC.
func bashRendering(line, body string) string {
	if !strings.Contains(line, "COPROC") {
		body = strings.ReplaceAll(body, "coproc COPROC ", "coproc ")
	}
	return body
}
