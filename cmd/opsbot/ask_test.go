package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/opsbot/opsbot/approvals/redact/redacttest"
)

// askCmd prepares `opsbot ask` against the fake model, in a fresh dir.
func askCmd(t *testing.T, llm *fakeLLM, question string) *exec.Cmd {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "ask", question)
	cmd.Dir = dir
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ANTHROPIC_") && !strings.HasPrefix(kv, "OPENAI_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "OPSBOT_BE_MAIN=1", "OPENAI_BASE_URL="+llm.serve(t), "OPENAI_API_KEY=test-key", "OPSBOT_MODEL=fake-model")
	return cmd
}

func TestAskRunsARealCommandAndStreamsTheAnswer(t *testing.T) {
	t.Parallel()
	llm := &fakeLLM{t: t, commands: map[string]string{"disk": "df -h"}}
	cmd := askCmd(t, llm, "how full is the disk?")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("ask: %v\nstderr: %s", err, stderr.String())
	}
	results := llm.toolResults()
	if len(results) != 1 || !strings.Contains(results[0], "Filesystem") {
		t.Fatalf("the model was not given df's output: %q", results)
	}
	// The text before the tool call and the answer after it are two
	// paragraphs, not glued together.
	if out := stdout.String(); !strings.HasPrefix(out, "Let me check.") || !strings.Contains(out, "\n\nThe command said: Filesystem") {
		t.Errorf("stdout = %q", out)
	}
	if !strings.Contains(stderr.String(), "running df -h on local") {
		t.Errorf("no tool activity on stderr: %q", stderr.String())
	}
}

func TestAskDeniedAtTheTerminalLeavesFilesAlone(t *testing.T) {
	t.Parallel()
	victim := filepath.Join(t.TempDir(), "x")
	os.MkdirAll(filepath.Join(victim, "keep"), 0o755)
	llm := &fakeLLM{t: t, commands: map[string]string{"remove": "rm -rf " + victim}}
	cmd := askCmd(t, llm, "please remove the temp dir")
	master, slave := openPTY(t)
	cmd.Stdin = slave
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderrR, stderrW, _ := os.Pipe()
	cmd.Stderr = stderrW
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stderrW.Close()
	slave.Close()
	defer cmd.Process.Kill()

	// Wait for the question, answer n.
	var seen strings.Builder
	r := bufio.NewReader(stderrR)
	for !strings.Contains(seen.String(), "[y/N]") {
		b, err := r.ReadByte()
		if err != nil {
			t.Fatalf("no approval question on stderr: %q", seen.String())
		}
		seen.WriteByte(b)
	}
	if !strings.Contains(seen.String(), "rm -rf "+victim) {
		t.Errorf("the question does not show the command: %q", seen.String())
	}
	master.Write([]byte("n\n"))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	go func() { // drain stderr so the child never blocks on it
		for {
			if _, err := r.ReadByte(); err != nil {
				return
			}
		}
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ask: %v", err)
		}
	case <-time.After(60 * time.Second): // a hang guard
		t.Fatal("ask did not end after the answer")
	}
	if _, err := os.Stat(filepath.Join(victim, "keep")); err != nil {
		t.Fatalf("the directory is gone after answering n: %v", err)
	}
	told := llm.toolResults()
	if len(told) != 1 || !strings.Contains(told[0], "denied") {
		t.Errorf("the model was not told of the denial: %q", told)
	}
}

func TestAskWithoutTerminalDenies(t *testing.T) {
	t.Parallel()
	victim := filepath.Join(t.TempDir(), "x")
	os.MkdirAll(victim, 0o755)
	llm := &fakeLLM{t: t, commands: map[string]string{"remove": "rm -rf " + victim}}
	cmd := askCmd(t, llm, "please remove it")
	cmd.Stdin = strings.NewReader("y\n") // piped input is not a person
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("ask: %v\n%s", err, stderr.String())
	}
	if _, err := os.Stat(victim); err != nil {
		t.Fatal("the command ran without a terminal to approve it")
	}
	if !strings.Contains(stderr.String(), "no terminal") {
		t.Errorf("stderr does not say why: %q", stderr.String())
	}
	if told := llm.toolResults(); len(told) != 1 || !strings.Contains(told[0], "denied") {
		t.Errorf("the model was not told: %q", told)
	}
}

func TestAskWithoutModelSaysHowToConfigureOne(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "ask", "hello")
	cmd.Dir = t.TempDir()
	cmd.Env = append([]string{"OPSBOT_BE_MAIN=1", "PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, coverEnv()...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "ANTHROPIC_API_KEY") {
		t.Errorf("exit %v, output %q", err, out)
	}
	// Said at once, and only that: no log lines of a bot started and
	// stopped for nothing, no database left in the current directory.
	if lines := strings.Split(strings.TrimSpace(string(out)), "\n"); len(lines) != 1 {
		t.Errorf("%d lines, want the one that says what to set:\n%s", len(lines), out)
	}
	if _, err := os.Stat(filepath.Join(cmd.Dir, "opsbot.db")); err == nil {
		t.Error("ask without a model created ./opsbot.db")
	}
}

// openPTY opens a pseudo-terminal pair (Linux /dev/ptmx).
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatal(e)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatal(e)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); s.Close() })
	return m, s
}

func TestChatKeepsOneSessionAcrossLines(t *testing.T) {
	t.Parallel()
	llm := &fakeLLM{t: t, commands: map[string]string{"disk": "df -h"}, say: []string{"Hello ", "again."}}
	cmd := askCmd(t, llm, "")
	cmd.Args = []string{os.Args[0], "chat"}
	cmd.Stdin = strings.NewReader("hi there\nhow full is the disk?\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chat: %v\n%s", err, stderr.String())
	}
	if out := stdout.String(); !strings.Contains(out, "Hello again.") || !strings.Contains(out, "The command said: Filesystem") {
		t.Errorf("stdout = %q", out)
	}
	llm.mu.Lock()
	defer llm.mu.Unlock()
	last := llm.requests[len(llm.requests)-1]
	// The second line's turn carried the first line's exchange: one session.
	if n := len(last.Messages); n < 5 || fmt.Sprint(last.Messages[1].Content) != "hi there" {
		t.Errorf("the second turn did not see the first: %d messages", n)
	}
}

func TestAskWithAnEmptyQuestionIsAUsageError(t *testing.T) {
	t.Parallel()
	code, _, stderr := runOpsbot(t, "ask", "  ")
	if code != 2 || !strings.Contains(stderr, "ask needs a question") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// `opsbot ask` prints the answer through the redactor, as every chat
// does: a secret the model says, split across deltas, shows as
// [redacted …], and none of it reaches stdout.
func TestAskRedactsTheAnswer(t *testing.T) {
	t.Parallel()
	llm := &fakeLLM{t: t, say: []string{"The key is ", redacttest.AWSAccessKey[:9], redacttest.AWSAccessKey[9:] + " and the token ",
		redacttest.GitHubToken[:20], redacttest.GitHubToken[20:] + ".\nNothing else."}}
	cmd := askCmd(t, llm, "what is the key?")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("ask: %v\nstderr: %s", err, stderr.String())
	}
	want := "The key is [redacted aws-access-key] and the token [redacted github-pat].\nNothing else.\n"
	if stdout.String() != want {
		t.Errorf("stdout = %q, want %q", stdout.String(), want)
	}
	redacttest.AssertNoSecret(t, redacttest.Secrets(), stdout.String(), stderr.String())
}
