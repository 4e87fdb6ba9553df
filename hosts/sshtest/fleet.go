package sshtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Fleet is several sshd processes that share one host key and one client
// key, for more addresses than one sshd can listen on (MaxAddrs). Each
// address is a host of the fleet.
type Fleet struct {
	Servers      []*Server
	Addrs        []string // host:port of every host
	User         string
	KnownHosts   string // trusts every address
	IdentityFile string
}

// NewFleet starts sshd processes in dir for every IP of addrs (MaxAddrs
// per process), each with opts otherwise. Stop it when done.
func NewFleet(dir string, addrs []string, opts Options) (*Fleet, error) {
	f := &Fleet{}
	var known []string
	for i := 0; i < len(addrs); i += MaxAddrs {
		o := opts
		o.Addrs = addrs[i:min(i+MaxAddrs, len(addrs))]
		sub := filepath.Join(dir, fmt.Sprintf("sshd-%02d", i/MaxAddrs))
		if err := os.MkdirAll(sub, 0o700); err != nil {
			f.Stop()
			return nil, err
		}
		var shared *Server
		if len(f.Servers) > 0 {
			shared = f.Servers[0]
		}
		s, err := newServer(sub, o, shared)
		if err != nil {
			f.Stop()
			return nil, err
		}
		f.Servers = append(f.Servers, s)
		f.Addrs = append(f.Addrs, s.Addrs...)
		for _, a := range s.Addrs {
			known = append(known, KnownHostsLine(a, s.HostKey))
		}
	}
	f.User, f.IdentityFile = f.Servers[0].User, f.Servers[0].IdentityFile
	f.KnownHosts = filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(f.KnownHosts, []byte(strings.Join(known, "\n")+"\n"), 0o600); err != nil {
		f.Stop()
		return nil, err
	}
	return f, nil
}

// Stop stops every server of the fleet.
func (f *Fleet) Stop() {
	for _, s := range f.Servers {
		_ = s.Stop()
	}
}
