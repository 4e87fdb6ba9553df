//go:build !linux

package hosts

import "fmt"

func localProcess(pid int, command string) Process {
	return Process{Host: LocalHost, PID: pid, Command: command}
}

// EndLocal is not supported off Linux: nothing is ended.
func EndLocal(p Process) (bool, error) {
	return false, fmt.Errorf("hosts: ending a process group left by a crash needs Linux")
}
