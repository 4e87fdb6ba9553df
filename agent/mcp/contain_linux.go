package mcp

import (
	"os/exec"
	"syscall"
)

// contain puts a stdio server in a process group of its own, which
// endGroup kills, and has the kernel kill it when opsbot dies. Pdeathsig
// follows the thread that started the child, not the process: the Go
// runtime ends a thread only when a goroutine locked to it exits locked,
// so a server may then be killed early (and reconnected by run), never
// left behind.
func contain(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// endGroup kills what is left of a stdio server's process group (children
// it started and left behind) once the server itself is closed.
func endGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
