package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// deployDoc is docs/DEPLOY.md.
func deployDoc(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "DEPLOY.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// fencedBlocks are the doc's ``` blocks of a language, unindented (a block
// inside a list item is indented with it).
func fencedBlocks(doc, lang string) []string {
	var out []string
	for _, m := range regexp.MustCompile("(?s)\n( *)```"+lang+"\n(.*?)\n *```").FindAllStringSubmatch(doc, -1) {
		var lines []string
		for _, l := range strings.Split(m[2], "\n") {
			lines = append(lines, strings.TrimPrefix(l, m[1]))
		}
		out = append(out, strings.Join(lines, "\n")+"\n")
	}
	return out
}

// blockWith is the one block of a language holding s.
func blockWith(t *testing.T, doc, lang, s string) string {
	t.Helper()
	var found []string
	for _, b := range fencedBlocks(doc, lang) {
		if strings.Contains(b, s) {
			found = append(found, b)
		}
	}
	if len(found) != 1 {
		t.Fatalf("DEPLOY.md has %d ```%s blocks with %q, want one", len(found), lang, s)
	}
	return found[0]
}

// TestDeployDocSystemdRecipe runs DEPLOY.md's systemd credentials recipe as
// written: its config (the key and known_hosts from ${CREDENTIALS_DIRECTORY})
// in /etc/opsbot/opsbot.yaml, its env file, and its `config check` line run
// by sh, /etc/opsbot standing for a temporary folder. The line passes; the
// same line without its CREDENTIALS_DIRECTORY= fails naming the variable,
// as it would outside the unit. The drop-in's credentials are the files of
// /etc/opsbot under their own names, so the check reads what the service
// will.
func TestDeployDocSystemdRecipe(t *testing.T) {
	t.Parallel()
	doc := deployDoc(t)
	etc := t.TempDir()
	sshFiles(t, etc, "")
	write(t, filepath.Join(etc, "opsbot.yaml"), blockWith(t, doc, "yaml", "${CREDENTIALS_DIRECTORY}"))
	example, err := os.ReadFile(filepath.Join("..", "..", "deploy", "opsbot.env.example"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(etc, "opsbot.env"), string(example))
	for _, m := range regexp.MustCompile(`(?m)^LoadCredential=([^:]+):(\S+)$`).FindAllStringSubmatch(blockWith(t, doc, "ini", "LoadCredential="), -1) {
		if m[2] != "/etc/opsbot/"+m[1] {
			t.Errorf("LoadCredential=%s:%s: the check line reads /etc/opsbot/%s in its place", m[1], m[2], m[1])
		}
	}
	var check string
	for _, l := range strings.Split(blockWith(t, doc, "sh", "opsbot config check"), "\n") {
		if strings.Contains(l, "opsbot config check") {
			check = l
		}
	}
	check = strings.ReplaceAll(strings.TrimPrefix(check, "sudo "), "/etc/opsbot", etc)

	out, code := runShellWithOpsbot(t, check)
	if code != 0 || !strings.Contains(out, "opsbot.yaml: ok") {
		t.Errorf("DEPLOY.md's check line %q: exit %d\n%s", check, code, out)
	}
	without := strings.Replace(check, "CREDENTIALS_DIRECTORY="+etc+" ", "", 1)
	if without == check {
		t.Fatalf("the check line does not set CREDENTIALS_DIRECTORY=/etc/opsbot: %q", check)
	}
	out, code = runShellWithOpsbot(t, without)
	if code != exitUsage || !strings.Contains(out, "CREDENTIALS_DIRECTORY is not set") {
		t.Errorf("without CREDENTIALS_DIRECTORY: exit %d\n%s\nwant exit %d naming the variable", code, out, exitUsage)
	}
}

// runShellWithOpsbot runs a shell line with `opsbot` on PATH being this
// test binary acting as opsbot, outside any systemd unit.
func runShellWithOpsbot(t *testing.T, line string) (string, int) {
	t.Helper()
	bin := t.TempDir()
	write(t, filepath.Join(bin, "opsbot"), "#!/bin/sh\nOPSBOT_BE_MAIN=1 exec "+os.Args[0]+" \"$@\"\n")
	if err := os.Chmod(filepath.Join(bin, "opsbot"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", line)
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "CREDENTIALS_DIRECTORY=") && !strings.HasPrefix(e, "PATH=") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	cmd.Env = append(cmd.Env, "PATH="+bin+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil && cmd.ProcessState == nil {
		t.Fatal(err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}
