package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// serverHolds says whether process pid still has open the TCP connection
// whose other end is client (the local address of a connection to it):
// seen from the server, as the client itself cannot tell a close it never
// reads up to (its receive window is full and the FIN waits behind the
// data). It looks the socket up in /proc/PID/net/tcp{,6} and among the
// process's file descriptors.
func serverHolds(pid int, client *net.TCPAddr) (bool, error) {
	inodes, err := socketInodes(pid, client.Port)
	if err != nil {
		return false, err
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return false, err
	}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join(fmt.Sprintf("/proc/%d/fd", pid), fd.Name()))
		if err == nil && inodes[link] {
			return true, nil
		}
	}
	return false, nil
}

// socketInodes are the "socket:[INODE]" names of pid's network
// namespace's TCP sockets whose remote port is port.
func socketInodes(pid, port int) (map[string]bool, error) {
	out := map[string]bool{}
	for _, table := range []string{"tcp", "tcp6"} {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(string(raw), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 {
				continue
			}
			_, remotePort, _ := strings.Cut(f[2], ":")
			if p, err := strconv.ParseUint(remotePort, 16, 16); err == nil && int(p) == port {
				out["socket:["+f[9]+"]"] = true
			}
		}
	}
	return out, nil
}

// closeSeen is what watchClose saw.
type closeSeen struct {
	closed bool
	after  time.Duration // when closed: how long after the watch began
	err    error
}

// watchClose polls, every 100 ms until stop, whether pid still holds the
// connection from client, and sends whether and when it let go.
func watchClose(pid int, client *net.TCPAddr, stop <-chan struct{}) <-chan closeSeen {
	done := make(chan closeSeen, 1)
	t0 := time.Now()
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				done <- closeSeen{}
				return
			case <-tick.C:
			}
			held, err := serverHolds(pid, client)
			if err != nil || !held {
				done <- closeSeen{closed: err == nil, after: time.Since(t0), err: err}
				return
			}
		}
	}()
	return done
}
