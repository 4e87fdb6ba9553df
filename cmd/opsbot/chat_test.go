package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/hosts"
)

// chatCmd prepares `opsbot chat` without a model, in a fresh dir.
func chatCmd(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "chat")
	cmd.Dir = t.TempDir()
	cmd.Env = append([]string{"OPSBOT_BE_MAIN=1", "PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "USER=tester"}, coverEnv()...)
	return cmd
}

// Without a model, `opsbot chat` is the web chat's commands in the
// terminal: help, hosts, run (through the policy: a risky command is
// denied when nobody can be asked), and a question says how to turn the
// agent on.
func TestChatWithoutModelOffersTheChatCommands(t *testing.T) {
	t.Parallel()
	cmd := chatCmd(t)
	victim := filepath.Join(t.TempDir(), "never")
	cmd.Stdin = strings.NewReader("help\nhosts\nrun local echo hello-from-chat\nrun local touch " + victim + "\nhow full is the disk?\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chat: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	out, errs := stdout.String(), stderr.String()
	for _, want := range []string{
		"run <target> <command> — run a command", // help, its Markdown shown as text
		"local",            // hosts
		"hello-from-chat",  // run's output
		"The agent is off", // the question
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	for _, want := range []string{"agent off: the chat commands work", "✓ echo hello-from-chat on local: exit 0", "no terminal"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if _, err := os.Stat(victim); err == nil {
		t.Errorf("a command that needs approval ran without anyone to approve it")
	}
}

// At a terminal, the approval card is asked y/N and "y" runs the command:
// the person at the terminal approves their own request there.
func TestChatWithoutModelAsksApprovalAtTheTerminal(t *testing.T) {
	t.Parallel()
	cmd := chatCmd(t)
	target := filepath.Join(t.TempDir(), "approved")
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
	// A hang guard, not a speed bound: a chat stuck waiting for input
	// would otherwise keep the reads below waiting for ever.
	guard := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer guard.Stop()
	r := bufio.NewReader(stderrR)
	var seen strings.Builder
	waitFor := func(s string) {
		t.Helper()
		for !strings.Contains(seen.String(), s) {
			b, err := r.ReadByte()
			if err != nil {
				t.Fatalf("stderr ended before %q: %q", s, seen.String())
			}
			seen.WriteByte(b)
		}
	}
	waitFor("you> ")
	master.Write([]byte("run local touch " + target + "\n"))
	waitFor("[y/N]")
	if !strings.Contains(seen.String(), "touch "+target) {
		t.Errorf("the question does not show the command: %q", seen.String())
	}
	master.Write([]byte("y\n"))
	waitFor("touch " + target + " on local: exit 0")
	if _, err := os.Stat(target); err != nil {
		t.Errorf("approved at the terminal, the command did not run: %v", err)
	}
	waitFor("you> ")
	// Answering n denies it: the card and the reply say so in one word.
	refused := filepath.Join(t.TempDir(), "refused")
	master.Write([]byte("run local touch " + refused + "\n"))
	waitFor("[y/N]")
	from := seen.Len()
	master.Write([]byte("n\n"))
	waitFor("You denied it")
	if got := seen.String()[from:]; !strings.Contains(got, "denied by @") || strings.Contains(got, "withdrawn") {
		t.Errorf("the card and the reply differ on what n did: %q", got)
	}
	waitFor("you> ")
	// The terminal shows the card's Markdown as text.
	for _, mark := range []string{"**", "```", "`"} {
		if strings.Contains(seen.String(), mark) {
			t.Errorf("the terminal shows Markdown %q:\n%s", mark, seen.String())
		}
	}
	master.Close() // end of input ends the chat
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
			t.Errorf("chat: %v", err)
		}
	case <-time.After(60 * time.Second): // a hang guard
		t.Fatal("chat did not end at the end of input")
	}
}

// A chat `run` without --timeout gets exec.timeout from the config (it was
// a fixed minute), and a command stopped at that deadline says so instead
// of a bare exit code.
func TestChatRunUsesExecTimeout(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "opsbot.yaml")
	data := "store: {path: " + filepath.Join(t.TempDir(), "opsbot.db") + "}\nexec: {timeout: 1s}\n"
	if err := os.WriteFile(cfg, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := chatCmd(t)
	cmd.Args = append(cmd.Args, "--config", cfg)
	cmd.Stdin = strings.NewReader("run local sleep 120\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chat: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	if want := "sleep 120 on local: stopped at its deadline of 1s"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\nstdout: %s\nstderr: %s", want, stdout.String(), stderr.String())
	}
}

// A chat that ends (end of input) stops the bot without a word: no log
// lines at the default level, no "context canceled" from its loops.
func TestChatEndsQuietly(t *testing.T) {
	t.Parallel()
	if err := hosts.SandboxIsolation(); err != nil && testing.Short() {
		t.Skipf("needs root: without the sandbox's mount namespace opsbot rightly warns (go test -short skips this; make test runs it as root): %v", err)
	}
	cmd := chatCmd(t)
	cmd.Stdin = strings.NewReader("hosts\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chat: %v\n%s", err, stderr.String())
	}
	for _, bad := range []string{"context canceled", `"level"`, "level=", "sandbox:"} {
		if strings.Contains(stderr.String(), bad) {
			t.Errorf("stderr has %q:\n%s", bad, stderr.String())
		}
	}
}
