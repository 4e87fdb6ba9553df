//go:build !linux

package mcp

import "os/exec"

// contain leaves the child as it is where process groups and Pdeathsig
// are not Linux's: opsbot runs on Linux; this builds elsewhere.
func contain(*exec.Cmd) {}

func endGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}
