//go:build !linux

package hosts

import (
	"errors"
	"syscall"
)

// The sandbox is Landlock, Linux only: elsewhere SandboxSupport says so
// and sandboxed commands are refused (or, best effort, run unconfined).

const sandboxArg = "__opsbot-sandbox__"

const launcherPath = ""

func sandboxSupport() error {
	return errors.New("the sandbox uses Landlock, which only Linux has")
}

func namespaces(*syscall.SysProcAttr, bool) {}

func probeIsolation() (bool, error) {
	return false, errors.New("mount namespaces are Linux only")
}
