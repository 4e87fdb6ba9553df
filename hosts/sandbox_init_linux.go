package hosts

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// supervise starts the command as the launcher's child and waits for it,
// as a subreaper: whatever the command leaves running (a `setsid sleep &`,
// a nohup, a double fork) is reparented to the launcher, not to init, and
// the launcher kills it all before it returns — so the bot sees the
// command end only once nothing of it is left. A TERM, INT, HUP or QUIT
// (the bot's cancel or deadline, a closed pty, the bot's own death: see
// launch.isolate) kills the command at once, and so the rest; the
// launcher itself outlives a signal to its process group to do that. A
// command killed by a signal is reported on statusFD.
func (s launcherSpec) supervise() (int, error) {
	report := os.NewFile(statusFD, "status")
	syscall.CloseOnExec(statusFD)
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return 0, fmt.Errorf("subreaper: %w", err)
	}
	// A handler, not SIG_IGN, which the command would inherit.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	pid, err := syscall.ForkExec(s.path, s.argv, &syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, 1, 2}})
	if err != nil {
		return 0, fmt.Errorf("%s: %w", s.path, err)
	}
	go func() {
		<-stop
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}()
	st := waitFor(pid)
	killChildren()
	if st.Signaled() {
		fmt.Fprint(report, int(st.Signal()))
		return 128 + int(st.Signal()), nil
	}
	return st.ExitStatus(), nil
}

// waitFor reaps children until pid has ended, and returns its status.
func waitFor(pid int) syscall.WaitStatus {
	for {
		var st syscall.WaitStatus
		got, err := syscall.Wait4(-1, &st, 0, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
		case err != nil: // ECHILD: cannot happen while pid is unreaped
			return st
		case got == pid:
			return st
		}
	}
}

// killChildren kills the launcher's children and reaps them until none is
// left: as each dies, its own children become the subreaper's, and the
// next round kills them.
func killChildren() {
	for {
		kids := children(os.Getpid())
		if len(kids) == 0 {
			return
		}
		for _, k := range kids {
			_ = syscall.Kill(k, syscall.SIGKILL)
		}
		for range kids {
			if _, err := syscall.Wait4(-1, nil, 0, nil); errors.Is(err, syscall.ECHILD) {
				break
			}
		}
	}
}

// children lists the processes whose parent is pid.
func children(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var kids []int
	for _, s := range stats {
		if f, err := readStat(s); err == nil && f.ppid == pid {
			kids = append(kids, f.pid)
		}
	}
	return kids
}
