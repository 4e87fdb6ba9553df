package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/opsbot/opsbot/agent"
)

// checkFiles checks what the config names on disk the way `opsbot run`
// will use it: the known_hosts file and identity files are read and
// parsed, skill folders loaded, the database's folder must exist and be
// writable. So `config check` fails on what `run` would refuse, and every
// command that loads the config refuses it the same way (exit 2), before
// doing anything.
func (c *Config) checkFiles() error {
	var errs []error
	add := func(key string, err error) {
		if err != nil {
			errs = append(errs, c.problem(key, err.Error()))
		}
	}
	if f := c.Hosts.SSH.KnownHosts; f != "" {
		add("ssh.known_hosts", checkKnownHosts(f))
	}
	for i, f := range c.Hosts.SSH.IdentityFiles {
		add(fmt.Sprintf("ssh.identity_files[%d]", i), checkIdentity(f))
	}
	for i, d := range c.Agent.SkillDirs {
		add(fmt.Sprintf("agent.skill_dirs[%d]", i), checkFolder(d, false))
	}
	if len(errs) == 0 && len(c.Agent.SkillDirs) > 0 {
		if _, err := agent.LoadSkills(c.Agent.SkillDirs); err != nil {
			add("agent.skill_dirs", errors.New(strings.TrimPrefix(err.Error(), "agent: ")))
		}
	}
	if dir := filepath.Dir(c.Store.Path); dir != "" {
		add("store.path", checkFolder(dir, true))
	}
	return errors.Join(errs...)
}

// problem is a ConfigError about key, at its line or its nearest
// enclosing key's.
func (c *Config) problem(key, msg string) *ConfigError {
	line := 0
	for k := key; k != "" && line == 0; k = parentKey(k) {
		line = c.lines[k]
	}
	return &ConfigError{File: c.file, Line: line, Key: key, Msg: msg}
}

// unreadable says in words why path cannot be read.
func unreadable(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist", path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s cannot be read by the user opsbot runs as (%s): check its owner and mode", path, osUser())
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("%s cannot be read: %v", path, err)
}

func checkKnownHosts(path string) error {
	_, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist: create it with your hosts' keys, e.g. ssh-keyscan -p 22 10.0.0.5 >> %s, after checking their fingerprints", path, path)
	case err != nil:
		return unreadable(path, err)
	}
	if _, err := knownhosts.New(path); err != nil {
		return fmt.Errorf("%s is not an OpenSSH known_hosts file: %s", path, strings.TrimPrefix(err.Error(), "knownhosts: "))
	}
	return nil
}

func checkIdentity(path string) error {
	pem, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist: name the private key opsbot logs in with (ssh-keygen -t ed25519 -f %s makes one), or remove the entry to use only the ssh-agent", path, path)
	case err != nil:
		return unreadable(path, err)
	}
	_, err = ssh.ParsePrivateKey(pem)
	var missing *ssh.PassphraseMissingError
	switch {
	case errors.As(err, &missing):
		return fmt.Errorf("%s is protected by a passphrase: load it into an ssh-agent (SSH_AUTH_SOCK) and remove it from this list", path)
	case err != nil:
		return fmt.Errorf("%s is not a private key opsbot can read (OpenSSH, PKCS#1 or PKCS#8 PEM); is it the .pub file?", path)
	}
	return nil
}

// checkFolder says why dir is not a folder opsbot can use (write: one it
// can create files in); nil when it is.
func checkFolder(dir string, write bool) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("the folder %s does not exist: create it, or name one that does", dir)
	case err != nil:
		return unreadable(dir, err)
	case !st.IsDir():
		return fmt.Errorf("%s is not a folder", dir)
	}
	mode := uint32(4 | 1) // read and search
	if write {
		mode = 2 | 1
	}
	if syscall.Access(dir, mode) != nil {
		what := "read"
		if write {
			what = "create files in"
		}
		return fmt.Errorf("the user opsbot runs as (%s) cannot %s the folder %s: check its owner and mode", osUser(), what, dir)
	}
	return nil
}
