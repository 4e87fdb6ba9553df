package hosts_test

import (
	"strings"
	"testing"

	"github.com/opsbot/opsbot/hosts"
)

func testInventory(t *testing.T) *hosts.Inventory {
	t.Helper()
	inv, err := hosts.NewInventory(hosts.Config{
		SSH: hosts.SSHConfig{KnownHosts: "/etc/opsbot/known_hosts"},
		Hosts: []hosts.HostConfig{
			{Name: "web-1", Address: "10.0.0.5:22", Groups: []string{"web", "prod"}},
			{Name: "web-2", Address: "10.0.0.6", User: "deploy", Groups: []string{"web"}},
			{Name: "db-1", Address: "10.0.0.7:2222", Groups: []string{"prod"}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

func TestInventoryResolve(t *testing.T) {
	t.Parallel()
	inv := testInventory(t)
	tests := []struct {
		target  string
		want    string // host names, comma separated
		wantErr []string
	}{
		{"web-1", "web-1", nil},
		{"local", "local", nil},
		{"group:web", "web-1,web-2", nil},
		{"group:prod", "web-1,db-1", nil},
		{"db-1, group:web", "db-1,web-1,web-2", nil},
		{"group:web,web-1,group:prod", "web-1,web-2,db-1", nil},
		{"web-9", "", []string{`unknown host "web-9"`, "local, web-1, web-2, db-1", "groups: prod, web"}},
		{"group:nope", "", []string{`unknown group "nope"`, "prod, web"}},
		{"web-1,,web-2", "", []string{"empty target"}},
		{"", "", []string{"empty target"}},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			got, err := inv.Resolve(tt.target)
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("resolved to %v, want an error", got)
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not say %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, h := range got {
				names = append(names, h.Name)
			}
			if strings.Join(names, ",") != tt.want {
				t.Errorf("got %v, want %s", names, tt.want)
			}
		})
	}
}

func TestInventoryHosts(t *testing.T) {
	t.Parallel()
	inv := testInventory(t)
	h, ok := inv.Lookup("web-2")
	if !ok || h.Address != "10.0.0.6:22" || h.User != "deploy" {
		t.Errorf("web-2 = %+v, want the default port added and its user", h)
	}
	all := inv.Hosts()
	if len(all) != 4 || !all[0].IsLocal() {
		t.Errorf("hosts %v, want local first then the three", all)
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		cfg    hosts.Config
		fields []string
	}{
		{"empty is fine: only local", hosts.Config{}, nil},
		{"known_hosts required", hosts.Config{Hosts: []hosts.HostConfig{{Name: "a", Address: "h:22"}}}, []string{"ssh.known_hosts"}},
		{"name and address", hosts.Config{SSH: hosts.SSHConfig{KnownHosts: "k"}, Hosts: []hosts.HostConfig{{}}}, []string{"hosts[0].name", "hosts[0].address"}},
		{"local is built in", hosts.Config{SSH: hosts.SSHConfig{KnownHosts: "k"}, Hosts: []hosts.HostConfig{{Name: "local", Address: "h"}}}, []string{"hosts[0].name"}},
		{"duplicate", hosts.Config{SSH: hosts.SSHConfig{KnownHosts: "k"}, Hosts: []hosts.HostConfig{{Name: "a", Address: "h"}, {Name: "a", Address: "h"}}}, []string{"hosts[1].name"}},
		{"target syntax in names", hosts.Config{SSH: hosts.SSHConfig{KnownHosts: "k"}, Hosts: []hosts.HostConfig{{Name: "a,b", Address: "h", Groups: []string{"g:x"}}}}, []string{"hosts[0].name", "hosts[0].groups[0]"}},
		{"remote_sandbox mode", hosts.Config{SSH: hosts.SSHConfig{KnownHosts: "k"}, Hosts: []hosts.HostConfig{{Name: "a", Address: "h", RemoteSandbox: "off"}, {Name: "b", Address: "h", RemoteSandbox: "best_effort"}}}, []string{"hosts[0].remote_sandbox"}},
		{"negative numbers", hosts.Config{SSH: hosts.SSHConfig{MaxSessions: -1}, Exec: hosts.ExecConfig{Timeout: -1}}, []string{"ssh.max_sessions", "exec.timeout"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if len(tt.fields) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, f := range tt.fields {
				if !strings.Contains(err.Error(), f+": ") {
					t.Errorf("error %q does not name %s", err, f)
				}
			}
		})
	}
}
