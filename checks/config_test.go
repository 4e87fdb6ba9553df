package checks

import (
	"errors"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/policy"
)

const exampleYAML = `
checks:
  - name: disk
    targets: group:prod
    command: df -P / | awk 'NR==2 {print $5+0}'
    timeout: 30s
    expect: {exit: 0, warn_above: 80, fail_above: 90}
  - name: nginx
    targets: group:web
    command: systemctl is-active nginx
    expect: {exit: 0, output_matches: '^active$'}
schedules:
  - name: morning
    cron: "CRON_TZ=Europe/Berlin 0 9 * * 1-5"
    checks: [disk, nginx]
    post_to: [{platform: slack, channel: C0123456789}, {platform: web, channel: ops}]
    post: changes
    notify_as: channel
    notify: ["<!subteam^S0123456789>", <@U0123456789>]
`

func TestConfigReadsTheIssueKeys(t *testing.T) {
	t.Parallel()
	var cfg Config
	dec := yaml.NewDecoder(strings.NewReader(exampleYAML))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("the issue's example is refused: %v", err)
	}
	d := cfg.Checks[0]
	if d.Timeout.Seconds() != 30 || *d.Expect.WarnAbove != 80 || *d.Expect.FailAbove != 90 || cfg.Checks[1].Expect.OutputMatches != "^active$" {
		t.Errorf("checks read as %+v", cfg.Checks)
	}
	s := cfg.Schedules[0]
	if s.Post != PostChanges || len(s.PostTo) != 2 || s.PostTo[1] != (Destination{"web", "ops"}) || len(s.Checks) != 2 ||
		s.NotifyAs != NotifyChannel || len(s.Notify) != 2 || s.Notify[1] != "<@U0123456789>" {
		t.Errorf("schedule read as %+v", s)
	}
}

func TestValidateNamesEachProblem(t *testing.T) {
	t.Parallel()
	ok := Check{Name: "disk", Targets: "all", Command: "df -P /"}
	sched := Schedule{Name: "s", Cron: "@daily", Checks: []string{"disk"}}
	tests := []struct {
		name  string
		edit  func(*Config)
		field string
		says  string
	}{
		{"zone with no schedule", func(c *Config) { c.Schedules[0].Cron = "CRON_TZ=UTC" }, "schedules[0].cron", "no schedule"},
		{"TZ with no schedule", func(c *Config) { c.Schedules[0].Cron = "TZ=Europe/Berlin " }, "schedules[0].cron", "no schedule"},
		{"unknown zone", func(c *Config) { c.Schedules[0].Cron = "CRON_TZ=Europe/Berln 0 9 * * *" }, "schedules[0].cron", "not a time zone"},
		{"bad fields", func(c *Config) { c.Schedules[0].Cron = "0 9 * *" }, "schedules[0].cron", "not a cron schedule"},
		{"six fields", func(c *Config) { c.Schedules[0].Cron = "0 0 9 * * *" }, "schedules[0].cron", "use 5 fields"},
		{"too often", func(c *Config) { c.Schedules[0].Cron = "@every 10s" }, "schedules[0].cron", "@every 1m or longer"},
		{"empty cron", func(c *Config) { c.Schedules[0].Cron = "" }, "schedules[0].cron", "is required"},
		{"unknown check", func(c *Config) { c.Schedules[0].Checks = []string{"disk", "dsik"} }, "schedules[0].checks[1]", `"dsik" is not a check`},
		{"bad post", func(c *Config) { c.Schedules[0].Post = "sometimes" }, "schedules[0].post", "always, changes or failures"},
		{"half destination", func(c *Config) { c.Schedules[0].PostTo = []Destination{{Platform: "slack"}} }, "schedules[0].post_to[0]", "platform and channel"},
		{"bad regexp", func(c *Config) { c.Checks[0].Expect.OutputMatches = "^(active" }, "checks[0].expect.output_matches", "missing closing )"},
		{"warn above fail", func(c *Config) { c.Checks[0].Expect.WarnAbove, c.Checks[0].Expect.FailAbove = ptr(95.0), ptr(90.0) },
			"checks[0].expect.warn_above", "above fail_above"},
		{"bad exit", func(c *Config) { c.Checks[0].Expect.Exit = 300 }, "checks[0].expect.exit", "0 to 255"},
		{"no command", func(c *Config) { c.Checks[0].Command = " " }, "checks[0].command", "is required"},
		{"duplicate check", func(c *Config) { c.Checks = append(c.Checks, ok) }, "checks[1].name", "used twice"},
	}
	for _, tt := range tests {
		cfg := Config{Checks: []Check{ok}, Schedules: []Schedule{sched}}
		tt.edit(&cfg)
		err := cfg.Validate()
		var fe FieldError
		if !errors.As(err, &fe) || fe.Field() != tt.field || !strings.Contains(fe.Msg, tt.says) {
			t.Errorf("%s: Validate = %v; want a problem at %s saying %q", tt.name, err, tt.field, tt.says)
		}
	}
}

func TestParseCronGuardsPanickingInput(t *testing.T) {
	t.Parallel()
	for _, spec := range []string{"CRON_TZ=UTC", "TZ=UTC", "CRON_TZ=", "CRON_TZ= ", "TZ="} {
		if _, err := ParseCron(spec); err == nil {
			t.Errorf("ParseCron(%q) accepted", spec)
		}
	}
	for _, spec := range []string{"@every 15m", "@daily", "CRON_TZ=UTC @hourly", "CRON_TZ=America/New_York 30 2 * * *", "*/5 * * * *"} {
		if _, err := ParseCron(spec); err != nil {
			t.Errorf("ParseCron(%q) = %v", spec, err)
		}
	}
}

// TestCheckNeedingApprovalIsRefused: a check's command must be one the real
// policy allows without approval on every target host.
func TestCheckNeedingApprovalIsRefused(t *testing.T) {
	t.Parallel()
	pol, err := policy.NewPolicy(policy.PolicyConfig{Rules: []policy.RuleConfig{
		{Name: "db restarts need a person", Hosts: []string{"db-1"}, Program: "systemctl", Args: []string{"is-active", "**"}, Action: "approve"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	inv, err := hosts.NewInventory(hosts.Config{SSH: hosts.SSHConfig{KnownHosts: "/dev/null"}, Hosts: []hosts.HostConfig{
		{Name: "web-1", Address: "10.0.0.1", Groups: []string{"prod"}},
		{Name: "db-1", Address: "10.0.0.2", Groups: []string{"prod"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Checks: []Check{
		{Name: "disk", Targets: "group:prod", Command: "df -P / | awk 'NR==2 {print $5+0}'"},
		{Name: "nginx", Targets: "group:prod", Command: "systemctl is-active nginx"},
		{Name: "cleanup", Targets: "web-1", Command: "rm -rf /tmp/cache"},
		{Name: "typo", Targets: "group:prdo", Command: "uptime"},
	}}
	err = cfg.ValidateFleet(inv, PolicyOf(pol))
	if err == nil {
		t.Fatal("checks that need approval were accepted")
	}
	msg := err.Error()
	for _, want := range []string{`check "nginx" needs approval on host db-1`, "db restarts need a person",
		`check "cleanup" needs approval on host web-1`, `check "typo": unknown group "prdo"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("ValidateFleet error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, `"disk"`) || strings.Contains(msg, "nginx\" needs approval on host web-1") {
		t.Errorf("an allowed check was refused:\n%s", msg)
	}
	if strings.Contains(msg, "hosts: ") || strings.Contains(msg, "approvals:") || strings.Contains(msg, "policy:") {
		t.Errorf("error shows a Go error chain:\n%s", msg)
	}
}
