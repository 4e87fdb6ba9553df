package policy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// bashReading asks the real bash how it parses line, without running it:
// the line becomes the body of a function that is never called, and
// `declare -f` prints bash's own rendering of what it parsed (quotes
// normalised, $'…' rewritten, one command per line). A DEBUG trap with
// extdebug skips every simple command except that declare, so a line
// that escaped the function body still runs nothing; bash also runs as
// nobody, in its own network, process, IPC and UTS namespaces, as a second
// fence. It returns ok=false when bash does not parse the line.
func bashReading(line string) (body string, ok bool, err error) {
	script := "shopt -s extdebug\ntrap '[[ $BASH_COMMAND == \"declare -f opsbot_parsed\" ]]' DEBUG\n" +
		"opsbot_parsed() {\n" + line + "\n}\ndeclare -f opsbot_parsed\n"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a guard against a hung process, not a wait
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "--norc", "--noprofile", "-c", script)
	cmd.Env = []string{"PATH=/nonexistent", "LC_ALL=C.UTF-8"}
	cmd.Dir = "/" // nobody may write there
	cmd.SysProcAttr = confined()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil && !errors.As(err, new(*exec.ExitError)) {
		return "", false, fmt.Errorf("running bash: %w", err)
	}
	text := string(out)
	head := "opsbot_parsed () \n{ \n"
	if !strings.HasPrefix(text, head) || !strings.HasSuffix(text, "\n}\n") || strings.Contains(stderr.String(), "syntax error") {
		return stderr.String(), false, nil
	}
	return strings.TrimSuffix(strings.TrimPrefix(text, head), "}\n"), true, nil
}

// bashReadings runs bashReading over lines, a few bash processes at a
// time.
func bashReadings(t *testing.T, lines []string) (bodies []string, ok []bool) {
	t.Helper()
	bodies, ok = make([]string, len(lines)), make([]bool, len(lines))
	errs := make([]error, len(lines))
	var wg sync.WaitGroup
	next := make(chan int)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				bodies[i], ok[i], errs[i] = bashReading(lines[i])
			}
		}()
	}
	for i, line := range lines {
		if !strings.ContainsRune(line, 0) { // no shell string holds a NUL
			next <- i
		}
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return bodies, ok
}

// confined runs a process as nobody when the test runs as root, and in
// its own namespaces either way, so nothing it could do reaches this
// machine's files, processes or network.
func confined() *syscall.SysProcAttr {
	flags := uintptr(syscall.CLONE_NEWNET | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS)
	if os.Getuid() == 0 {
		return &syscall.SysProcAttr{Cloneflags: flags, Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	return &syscall.SysProcAttr{
		Cloneflags:  flags | syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}},
	}
}

// TestCorpusParsesAsTheRunnerShell is the parser differential: for every
// corpus line, the commands the policy finds in the line, parsed in
// ShellDialect, are the commands it finds in real bash's own rendering of
// the line, and the decision is the same. Commands run under bash
// (hosts.RunnerShell), so a difference here is a command that would run
// other than it was classified.
func TestCorpusParsesAsTheRunnerShell(t *testing.T) {
	t.Parallel()
	if ShellDialect.String() != "bash" {
		t.Fatalf("the policy parses as %s; this test compares with real bash", ShellDialect)
	}
	p := defaultPolicy(t)
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) < 3 {
		t.Fatalf("corpus files: %v %v", files, err)
	}
	var lines []string
	for _, name := range files {
		lines = append(lines, readCorpus(t, name)...)
	}
	bodies, parsed := bashReadings(t, lines)
	compared, bashRefused := 0, 0
	for i, line := range lines {
		// Without the policy's own confirmation by bash: this test is
		// that comparison, made here with a bash confined as nobody.
		ours := p.check(Target{Host: "web-1"}, line, false)
		if strings.ContainsRune(line, 0) {
			// No shell string holds a NUL byte: bash could never be given it.
			if ours.Action == Allow {
				t.Errorf("%q holds a NUL byte, yet the policy allows it", line)
			}
			continue
		}
		body := bodies[i]
		if !parsed[i] {
			// bash will not run it at all; the policy must not allow it.
			bashRefused++
			if ours.Action == Allow {
				t.Errorf("bash does not parse %q (%s), yet the policy allows it", line, strings.TrimSpace(body))
			}
			continue
		}
		compared++
		theirs := p.check(Target{Host: "web-1"}, bashRendering(line, body), false)
		if !sameReading(ours, theirs) || (ours.Action == Allow && theirs.Action != Allow) {
			t.Errorf("bash reads %q differently from the policy:\n  bash's rendering: %q\n  policy: %s %q\n  bash:   %s %q",
				line, body, ours.Action, ours.Commands, theirs.Action, theirs.Commands)
		}
	}
	t.Logf("%d lines compared with bash's own parse; %d do not parse in bash", compared, bashRefused)
}
