package hosts_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/hosts"
)

var localHost = hosts.Host{Name: hosts.LocalHost}

func TestLocalExitCodesAndOutput(t *testing.T) { // not parallel: Setenv
	dir := t.TempDir()
	t.Setenv("OPSBOT_TEST_SECRET", "hunter2")
	l := &hosts.Local{Dir: dir}
	tests := []struct {
		name, cmd  string
		opts       hosts.Options
		wantCode   int
		wantSignal string
		wantOut    string
	}{
		{"true", "true", hosts.Options{}, 0, "", ""},
		{"exit 3", "echo hi; exit 3", hosts.Options{}, 3, "", "hi\n"},
		{"signal", "kill -KILL $$", hosts.Options{}, 137, "KILL", ""},
		{"bash syntax", "[[ a == a ]] && echo bash", hosts.Options{}, 0, "", "bash\n"},
		{"quotes", `printf '%s|' "it's" '$HOME'`, hosts.Options{}, 0, "", `it's|$HOME|`},
		{"session dir by default", "pwd", hosts.Options{}, 0, "", dir + "\n"},
		{"dir option", "pwd", hosts.Options{Dir: "/tmp"}, 0, "", "/tmp\n"},
		{"env option", `echo "$GREETING"`, hosts.Options{Env: []string{"GREETING=hello"}}, 0, "", "hello\n"},
		{"bot env not leaked", `echo "[$OPSBOT_TEST_SECRET]"`, hosts.Options{}, 0, "", "[]\n"},
		{"allowlisted env kept", `test -n "$PATH" && echo path`, hosts.Options{}, 0, "", "path\n"},
		{"stdin", "tr a-z A-Z", hosts.Options{Stdin: strings.NewReader("shout\n")}, 0, "", "SHOUT\n"},
		{"pty", "test -t 1 && echo tty; echo err >&2", hosts.Options{PTY: true}, 0, "", "tty\r\nerr\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := l.Run(bg, localHost, tt.cmd, tt.opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != tt.wantCode || res.Signal != tt.wantSignal {
				t.Errorf("exit %d signal %q, want %d %q (output %q)", res.ExitCode, res.Signal, tt.wantCode, tt.wantSignal, res.Output)
			}
			if tt.wantOut != "" && string(res.Output) != tt.wantOut {
				t.Errorf("output %q, want %q", res.Output, tt.wantOut)
			}
		})
	}
}

func TestLocalStreamsStderrApart(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	_, err := (&hosts.Local{}).Run(bg, localHost, "echo out; echo err >&2", hosts.Options{}, rec.chunk)
	if err != nil {
		t.Fatal(err)
	}
	if rec.get(hosts.Stdout) != "out\n" || rec.get(hosts.Stderr) != "err\n" {
		t.Errorf("stdout %q stderr %q", rec.get(hosts.Stdout), rec.get(hosts.Stderr))
	}
}

func TestLocalCancelKillsProcessGroup(t *testing.T) {
	t.Parallel()
	sleep := uniqueSleep()
	ctx, cancel := context.WithCancel(bg)
	run := startSleep(t, sleep, func(cmd string, onChunk func(hosts.Chunk)) error {
		_, err := (&hosts.Local{}).Run(ctx, localHost, cmd, hosts.Options{}, onChunk)
		return err
	})
	procs := findRunning(t, sleep)
	cancel()
	if err := run.wait(); !errors.Is(err, context.Canceled) {
		t.Errorf("Run error %v, want context.Canceled", err)
	}
	awaitExit(t, sleep, procs)
}

func TestLocalDeadlineKillsCommand(t *testing.T) {
	t.Parallel()
	marker := fmt.Sprintf("yes opsbot-local-deadline-%d", time.Now().UnixNano())
	res, err := (&hosts.Local{}).Run(bg, localHost, marker+" > /dev/null", hosts.Options{Timeout: time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.ExitCode != 124 || res.OK() {
		t.Errorf("result %+v, want timed out with 124", res)
	}
	waitGone(t, marker)
}

func TestLocalDeadlineKillsTermIgnoringCommand(t *testing.T) {
	t.Parallel()
	sleep := uniqueSleep()
	res, err := (&hosts.Local{}).Run(bg, localHost, "trap '' TERM; "+sleep+"; true", hosts.Options{Timeout: 500 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut {
		t.Errorf("result %+v, want timed out", res)
	}
	waitGone(t, sleep)
}

// Not parallel: the heap measurement must not see other tests.
func TestLocalOutputCapBoundsMemory(t *testing.T) {
	peak := newHeapPeak()
	res, err := (&hosts.Local{}).Run(bg, localHost, "yes | head -c 50M", hosts.Options{}, peak.sample)
	if err != nil {
		t.Fatal(err)
	}
	if res.OutputBytes != 50<<20 || !res.Truncated {
		t.Errorf("printed %d bytes, truncated %v", res.OutputBytes, res.Truncated)
	}
	checkCapped(t, res, hosts.DefaultOutputLimit)
	peak.check(t, 32<<20)
}

func TestLocalRefusesRemoteHost(t *testing.T) {
	t.Parallel()
	_, err := (&hosts.Local{}).Run(bg, hosts.Host{Name: "web-1", Address: "10.0.0.5:22"}, "true", hosts.Options{}, nil)
	if err == nil {
		t.Fatal("the local runner ran a command for an SSH host")
	}
}
