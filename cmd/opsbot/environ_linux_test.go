package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestScrubbedEnvironShowsNothingOfTheSecrets: after scrubbing, the
// bot's /proc/PID/environ (what any process of its user reads) holds
// neither the secret variables' names nor their values, nor a gap of
// their length where they were: the other variables follow each other,
// then only zeros.
func TestScrubbedEnvironShowsNothingOfTheSecrets(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0])
	cmd.Env = []string{scrubHelperEnv + "=1", "FIRST_VAR=one",
		"OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789", "SAFE_VAR=kept",
		"OPSBOT_WEB_API_KEY=webkey-0123456789abcdef", "LAST_VAR=last"}
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "scrubbed kept\n" {
		t.Fatalf("the helper said %q (%v)", line, err)
	}
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"OPENAI_API_KEY", "OPSBOT_WEB_API_KEY", "sk-proj-", "webkey-"} {
		if bytes.Contains(environ, []byte(s)) {
			t.Errorf("/proc/PID/environ still shows %q: %q", s, environ)
		}
	}
	kept := bytes.TrimRight(environ, "\x00")
	want := strings.Join([]string{scrubHelperEnv + "=1", "FIRST_VAR=one", "SAFE_VAR=kept", "LAST_VAR=last"}, "\x00")
	if string(kept) != want {
		t.Errorf("/proc/PID/environ holds %q before its zeros, want %q", kept, want)
	}
}

func TestWithoutVars(t *testing.T) {
	t.Parallel()
	block := []byte("A=1\x00SECRET_TOKEN=abc\x00B=2\x00C_KEY=x\x00")
	got, changed := withoutVars(block, []string{"SECRET_TOKEN", "C_KEY"})
	want := append([]byte("A=1\x00B=2\x00"), make([]byte, len(block)-8)...)
	if !changed || !bytes.Equal(got, want) {
		t.Errorf("withoutVars = %q, %v; want %q", got, changed, want)
	}
	if _, changed := withoutVars(block, []string{"NOPE"}); changed {
		t.Error("nothing to remove, yet changed")
	}
}
