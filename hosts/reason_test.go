package hosts_test

import (
	"context"
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
	p, err := hosts.NewPool(hosts.Config{SSH: hosts.SSHConfig{KnownHosts: srv.KnownHosts, IdentityFiles: []string{srv.IdentityFile},
		User: srv.User, ConnectTimeout: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

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

	for _, tt := range []struct {
		name, addr, user, want string
	}{
		{"refused", refused, srv.User, "nothing answers on its SSH port (connection refused)"},
		{"silent", silent.Addr().String(), srv.User, "the host did not answer in time"},
		{"wrong user", srv.Addr(), "nobody-" + fmt.Sprint(time.Now().UnixNano()%1000), "authentication as"},
	} {
		_, err := p.Run(context.Background(), hosts.Host{Name: "web-9", Address: tt.addr, User: tt.user}, "true", hosts.Options{}, nil)
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
	dns := fmt.Errorf("hosts: db-1: connect: %w", &net.DNSError{Err: "no such host", Name: "db-1.example", IsNotFound: true})
	if got := hosts.Reason(dns); got != "its name does not resolve (db-1.example)" {
		t.Errorf("Reason(dns) = %q", got)
	}
}
