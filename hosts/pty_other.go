//go:build !linux

package hosts

import (
	"errors"
	"io"
	"os/exec"
)

// ptyOutput is unsupported off Linux.
type ptyOutput struct{}

func attachPTY(*exec.Cmd, io.Writer) (*ptyOutput, error) {
	return nil, errors.New("a pty for local commands is only supported on Linux")
}

func (*ptyOutput) started(bool) {}
func (*ptyOutput) drain()       {}
