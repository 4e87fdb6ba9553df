package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

// sshFiles writes a private key (protected by passphrase when it is not
// empty), its .pub and a known_hosts file into dir.
func sshFiles(t *testing.T, dir, passphrase string) (key, pub, knownHosts string) {
	t.Helper()
	pk, sk, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var block *pem.Block
	if passphrase == "" {
		block, err = ssh.MarshalPrivateKey(sk, "")
	} else {
		block, err = ssh.MarshalPrivateKeyWithPassphrase(sk, "", []byte(passphrase))
	}
	if err != nil {
		t.Fatal(err)
	}
	sp, err := ssh.NewPublicKey(pk)
	if err != nil {
		t.Fatal(err)
	}
	key, pub, knownHosts = filepath.Join(dir, "id_ed25519"), filepath.Join(dir, "id_ed25519.pub"), filepath.Join(dir, "known_hosts")
	write(t, key, string(pem.EncodeToMemory(block)))
	write(t, pub, string(ssh.MarshalAuthorizedKey(sp)))
	write(t, knownHosts, "10.0.0.5 "+string(ssh.MarshalAuthorizedKey(sp)))
	return key, pub, knownHosts
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// config check refuses, in words and with file:line and key, every file
// `opsbot run` would refuse or silently do without.
func TestConfigCheckFindsTheFilesRunWouldRefuse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	key, pub, known := sshFiles(t, dir, "")
	locked, _, _ := sshFiles(t, t.TempDir(), "secret")
	garbage := filepath.Join(dir, "garbage")
	write(t, garbage, "this is not a known_hosts line\n")
	missing := filepath.Join(dir, "missing")
	ok := "ssh:\n  known_hosts: " + known + "\n  identity_files: [" + key + "]\n"
	cases := []struct {
		name string
		yaml string
		want []string
	}{
		{"all there", ok + "store:\n  path: " + filepath.Join(dir, "x.db") + "\n", nil},
		{"missing known_hosts and key", "ssh:\n  known_hosts: " + missing + "\n  identity_files: [" + key + ", " + missing + "]\n", []string{
			"c.yaml:2: ssh.known_hosts: " + missing + " does not exist: create it with your hosts' keys, e.g. ssh-keyscan -p 22 10.0.0.5 >> " + missing + ", after checking their fingerprints",
			"c.yaml:3: ssh.identity_files[1]: " + missing + " does not exist: name the private key opsbot logs in with (ssh-keygen -t ed25519 -f " + missing + " makes one), or remove the entry to use only the ssh-agent"}},
		{"a public key for a private one", "ssh:\n  identity_files: [" + pub + "]\n", []string{
			"c.yaml:2: ssh.identity_files[0]: " + pub + " is not a private key opsbot can read (OpenSSH, PKCS#1 or PKCS#8 PEM); is it the .pub file?"}},
		{"a key with a passphrase", "ssh:\n  identity_files: [" + locked + "]\n", []string{
			"c.yaml:2: ssh.identity_files[0]: " + locked + " is protected by a passphrase: load it into an ssh-agent (SSH_AUTH_SOCK) and remove it from this list"}},
		{"a known_hosts that is not one", "ssh:\n  known_hosts: " + garbage + "\n", []string{
			"c.yaml:2: ssh.known_hosts: " + garbage + " is not an OpenSSH known_hosts file: "}},
		{"a folder for a file", "ssh:\n  known_hosts: " + dir + "\n", []string{
			"c.yaml:2: ssh.known_hosts: " + dir + " cannot be read: is a directory"}},
		{"database in a missing folder", "store:\n  path: " + filepath.Join(missing, "x.db") + "\n", []string{
			"c.yaml:2: store.path: the folder " + missing + " does not exist: create it, or name one that does"}},
		{"missing skill folder", "agent:\n  skill_dirs: [" + missing + "]\n", []string{
			"c.yaml:2: agent.skill_dirs[0]: the folder " + missing + " does not exist: create it, or name one that does"}},
		{"files checked despite other problems", "log:\n  levle: x\nssh:\n  known_hosts: " + missing + "\n", []string{
			`c.yaml:2: log.levle: unknown key (did you mean "level"?); the keys here are: format, level`,
			"c.yaml:4: ssh.known_hosts: " + missing + " does not exist: "}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "c.yaml")
			write(t, path, c.yaml)
			_, err := loadConfig(path)
			got := flatten(err)
			if len(got) != len(c.want) {
				t.Fatalf("got %d problems, want %d:\n%v", len(got), len(c.want), err)
			}
			for i, e := range got {
				// The problems start with the file's path.
				msg := strings.TrimPrefix(e.Error(), filepath.Dir(path)+"/")
				if !strings.HasPrefix(msg, c.want[i]) {
					t.Errorf("problem %d:\n%s\nwant it to start with:\n%s", i, msg, c.want[i])
				}
			}
		})
	}
}

// The example config as shipped names sample key files that do not exist:
// every command that loads it refuses it the same way, exit 2, with the
// lines to change. With its samples replaced by real files it is valid.
func TestExampleConfigSamplesMustBeReplaced(t *testing.T) {
	t.Parallel()
	example, _ := filepath.Abs(filepath.Join("..", "..", "deploy", "opsbot.example.yaml"))
	data, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	// The lines of the two sample keys, found rather than fixed, so that a
	// key added above them does not break this test.
	lineOf := func(prefix string) int {
		for i, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, prefix) {
				return i + 1
			}
		}
		t.Fatalf("the example has no line %q", prefix)
		return 0
	}
	wantLines := []string{
		fmt.Sprintf(":%d: ssh.known_hosts: /etc/opsbot/known_hosts does not exist: ", lineOf("  known_hosts: /etc/opsbot/known_hosts")),
		fmt.Sprintf(":%d: ssh.identity_files[0]: /etc/opsbot/id_ed25519 does not exist: ", lineOf("  identity_files: [/etc/opsbot/id_ed25519]")),
	}
	for _, args := range [][]string{
		{"config", "check"}, {"run"}, {"hosts", "ping"}, {"hosts", "exec", "local", "--", "true"}, {"migrate"}, {"chat"},
	} {
		code, _, stderr := runOpsbot(t, append([]string{"--config", example}, args...)...)
		if code != 2 {
			t.Errorf("%v on the example: exit %d, want 2; stderr %q", args, code, stderr)
		}
		for _, w := range wantLines {
			if !strings.Contains(stderr, example+w) {
				t.Errorf("%v on the example: stderr %q lacks %q", args, stderr, w)
			}
		}
	}

	dir := t.TempDir()
	key, _, known := sshFiles(t, dir, "")
	server := filepath.Join(dir, "kubernetes-mcp-server") // the MCP server's sample command, installed
	write(t, server, "#!/bin/sh\n")
	if err := os.Chmod(server, 0o755); err != nil {
		t.Fatal(err)
	}
	mine := strings.NewReplacer("/etc/opsbot/known_hosts", known, "/etc/opsbot/id_ed25519", key,
		"/usr/local/bin/kubernetes-mcp-server", server).Replace(string(data))
	path := filepath.Join(dir, "opsbot.yaml")
	write(t, path, mine)
	if code, out, stderr := runOpsbot(t, "config", "check", "--config", path); code != 0 || out != path+": ok\n" {
		t.Errorf("the example with its sample files replaced: exit %d, %q %q", code, out, stderr)
	}
}
