package hosts_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/sshtest"
)

// TestReasonSaysWhatHappenedInWords: the failures a real pool meets, each
// said as a class a person acts on, never as the Go chain that carried it.
func TestReasonSaysWhatHappenedInWords(t *testing.T) {
	t.Parallel()
	srv := sshtest.Start(t, sshtest.Options{})
	pool := func(connect time.Duration) *hosts.Pool {
		p, err := hosts.NewPool(hosts.Config{SSH: hosts.SSHConfig{KnownHosts: srv.KnownHosts, IdentityFiles: []string{srv.IdentityFile},
			User: srv.User, ConnectTimeout: connect}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		return p
	}
	// The silent listener must time out soon; the real sshd must not,
	// however loaded the machine: its handshake decides the case.
	short, long := pool(time.Second), pool(2*time.Minute)

	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	refused := closed.Addr().String()
	closed.Close()
	silent, _ := net.Listen("tcp", "127.0.0.1:0") // accepts, never speaks SSH
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()

	hangup, _ := net.Listen("tcp", "127.0.0.1:0") // accepts and hangs up at once
	defer hangup.Close()
	go func() {
		for {
			c, err := hangup.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()

	for _, tt := range []struct {
		name, addr, user, want string
		p                      *hosts.Pool
	}{
		{"hung up", hangup.Addr().String(), srv.User, "the host closed the connection before SSH began", long},
		{"refused", refused, srv.User, "nothing answers on its SSH port (connection refused)", long},
		{"silent", silent.Addr().String(), srv.User, "the host did not answer in time", short},
		{"wrong user", srv.Addr(), "nobody-" + fmt.Sprint(time.Now().UnixNano()%1000), "authentication as", long},
	} {
		_, err := tt.p.Run(context.Background(), hosts.Host{Name: "web-9", Address: tt.addr, User: tt.user}, "true", hosts.Options{}, nil)
		got := hosts.Reason(err)
		if err == nil || !strings.Contains(got, tt.want) {
			t.Errorf("%s: Reason(%v) = %q, want %q", tt.name, err, got, tt.want)
		}
		for _, jargon := range []string{"dial tcp", "hosts:", "ssh:", "127.0.0.1"} {
			if strings.Contains(got, jargon) {
				t.Errorf("%s: Reason shows %q: %q", tt.name, jargon, got)
			}
		}
	}
	// An error of no known class keeps its own words, without the
	// wrapping's prefixes.
	if got := hosts.Reason(errors.New("hosts: local: sandbox: not available on this kernel; ask for approval")); got != "sandbox: not available on this kernel; ask for approval" {
		t.Errorf("Reason(other) = %q", got)
	}
	dns := fmt.Errorf("hosts: db-1: connect: %w", &net.DNSError{Err: "no such host", Name: "db-1.example", IsNotFound: true})
	if got := hosts.Reason(dns); got != "its name does not resolve (db-1.example)" {
		t.Errorf("Reason(dns) = %q", got)
	}
}
