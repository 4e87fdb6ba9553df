package main

import (
	"bufio"
	"bytes"
	"database/sql"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// At a terminal, `hosts exec` asks for a command that needs approval on
// the bot's own approval card (who may approve it, as every front shows),
// and the person's y/N is a vote the bot counts on that card: "y" runs
// the command with its output prefixed as ever, "n" runs nothing and
// exits 255 saying who denied it.
func TestHostsExecAsksOnTheBotsCard(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		answer   string
		wantCode int
		wantErr  []string
	}{
		{"y", 0, []string{"You approved it: it runs now.", "approved by @" + osUser()}},
		{"n", exitNotRun, []string{"You denied it: it will not run.", "not run: the approval request was denied by @" + osUser()}},
	} {
		t.Run(tt.answer, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			cfg := filepath.Join(dir, "opsbot.yaml")
			os.WriteFile(cfg, []byte("store:\n  path: "+filepath.Join(dir, "opsbot.db")+"\n"), 0o600)
			target := filepath.Join(dir, "made")
			cmd := opsbot(t, dir, "hosts", "exec", "--config", cfg, "local", "--", "touch "+target+" && echo made")
			code, stdout, stderr := answerAtTerminal(t, cmd, tt.answer)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d; stdout %q stderr %q", code, tt.wantCode, stdout, stderr)
			}
			for _, s := range tt.wantErr {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr)
				}
			}
			_, err := os.Stat(target)
			if ran := err == nil; ran != (tt.answer == "y") || (ran && stdout != "local | made\n") {
				t.Errorf("answered %s: ran %v, stdout %q", tt.answer, ran, stdout)
			}
		})
	}
}

// answerAtTerminal runs cmd with a terminal for stdin, waits for its y/N
// question on stderr, checks that the question is the bot's card, answers
// it, and returns how cmd ended.
func answerAtTerminal(t *testing.T, cmd *exec.Cmd, answer string) (code int, stdout, stderr string) {
	t.Helper()
	master, slave := openPTY(t)
	cmd.Stdin = slave
	var out bytes.Buffer
	cmd.Stdout = &out
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = stderrW
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stderrW.Close()
	slave.Close()
	defer cmd.Process.Kill()
	// A hang guard, not a speed bound: a question nobody answers would
	// keep the reads below waiting for ever.
	guard := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer guard.Stop()
	r := bufio.NewReader(stderrR)
	var seen strings.Builder
	for !strings.Contains(seen.String(), "[y/N]") {
		b, err := r.ReadByte()
		if err != nil {
			t.Fatalf("no approval question on stderr: %q", seen.String())
		}
		seen.WriteByte(b)
	}
	if !strings.Contains(seen.String(), "Who may approve: @"+osUser()) {
		t.Errorf("the question is not the bot's approval card: %q", seen.String())
	}
	master.Write([]byte(answer + "\n"))
	rest, _ := io.ReadAll(r)
	err = cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), seen.String() + string(rest)
}

// Without a terminal nobody can answer, so no request opens that nobody
// could see: the command is refused in the terminal's words, and the
// approvals table stays empty (a request was opened and withdrawn before).
func TestHostsExecWithoutTerminalOpensNoRequest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "opsbot.db")
	cfg := filepath.Join(dir, "opsbot.yaml")
	os.WriteFile(cfg, []byte("store:\n  path: "+db+"\n"), 0o600)
	code, _, stderr := runOpsbot(t, "hosts", "exec", "--config", cfg, "local", "--", "touch", filepath.Join(dir, "never"))
	if code != exitNotRun || !strings.Contains(stderr, "not run: it needs an approval, and there is no terminal to ask on") || strings.Contains(stderr, "denied by @") {
		t.Errorf("exit %d, stderr %q; want %d and the missing terminal's words", code, stderr, exitNotRun)
	}
	conn, err := sql.Open("sqlite3", db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var n int
	if err := conn.QueryRow(`SELECT count(*) FROM approvals`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d approval requests recorded (%v); want none", n, err)
	}
}
