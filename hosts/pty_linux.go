package hosts

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
	"unsafe"
)

// ptyOutput is a local command's pseudo-terminal: the child gets the
// terminal side as stdin, stdout and stderr; the bot reads the master.
type ptyOutput struct {
	master, tty *os.File
	done        chan struct{} // closed when the master has been read to its end
}

// attachPTY opens a pty for cmd, makes it the controlling terminal of a
// new session (so the command's group is still killable as a whole), and
// starts copying its output to w. Echo is off, so Stdin does not reappear
// in the output.
func attachPTY(cmd *exec.Cmd, w io.Writer) (*ptyOutput, error) {
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	tty, err := openTTY(master)
	if err != nil {
		master.Close()
		return nil, err
	}
	if cmd.Stdin != nil {
		in := cmd.Stdin
		go func() { _, _ = io.Copy(master, in) }() // ends when the master is closed
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	p := &ptyOutput{master: master, tty: tty, done: make(chan struct{})}
	go func() { // reading ends with EIO once every holder of the tty is gone
		defer close(p.done)
		_, _ = io.Copy(w, master)
	}()
	return p, nil
}

// openTTY unlocks and opens the terminal side of master, echo off.
func openTTY(master *os.File) (*os.File, error) {
	// Through SyscallConn, not Fd: Fd would switch the master to blocking
	// mode, and a blocked Read would then survive Close.
	rc, err := master.SyscallConn()
	if err != nil {
		return nil, err
	}
	var unlock int32
	var n uint32
	var ioErr error
	err = rc.Control(func(fd uintptr) {
		if ioErr = ioctl(fd, syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); ioErr == nil {
			ioErr = ioctl(fd, syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n)))
		}
	})
	if err != nil || ioErr != nil {
		return nil, errors.Join(err, ioErr)
	}
	tty, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	var t syscall.Termios
	if err := ioctl(tty.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&t))); err == nil {
		t.Lflag &^= syscall.ECHO
		_ = ioctl(tty.Fd(), syscall.TCSETS, uintptr(unsafe.Pointer(&t)))
	}
	return tty, nil
}

func ioctl(fd, req, arg uintptr) error {
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, req, arg); e != 0 {
		return e
	}
	return nil
}

// started closes the bot's copy of the terminal side once the child has
// its own (or the start failed), so the master sees the end of output.
func (p *ptyOutput) started(ok bool) {
	p.tty.Close()
	if !ok {
		p.master.Close()
		<-p.done
	}
}

// drain waits for the rest of the output (bounded: a process that
// escaped the group may hold the terminal) and closes the master.
func (p *ptyOutput) drain() {
	t := time.NewTimer(2 * time.Second)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
	}
	p.master.Close()
}
