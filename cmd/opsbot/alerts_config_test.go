package main

import (
	"strings"
	"testing"
)

// The alerts block as the issue writes it loads, and config check says in
// words what is wrong with each bad key.
func TestConfigCheckAlerts(t *testing.T) {
	t.Parallel()
	good := `alerts:
  sources:
    - name: am
      type: alertmanager
      token: ${OPSBOT_ALERT_TOKEN}
    - name: pd
      type: pagerduty
      secrets: ["${PD_SECRET}", "${PD_SECRET_OLD}"]
    - name: ci
      type: generic
      token: ${CI_TOKEN}
      fields: {title: $.title, status: $.state, dedupe: $.id, labels: $.tags}
  routes:
    - match: {severity: critical}
      post_to: {platform: web, channel: C0123456789}
      investigate: true
    - post_to: {platform: web, channel: ops}
      investigate: false
  host_labels: [instance, host, nodename]
  max_concurrent: 3
  cooldown: 30m
`
	vars := map[string]string{"OPSBOT_ALERT_TOKEN": "t1", "PD_SECRET": "s1", "PD_SECRET_OLD": "s0", "CI_TOKEN": "t2"}
	cfg, err := parseConfig("c.yaml", []byte(good), env(vars))
	if err != nil {
		t.Fatalf("the issue's alerts block does not load: %v", err)
	}
	if a := cfg.Alerts; len(a.Sources) != 3 || a.Sources[1].Secrets[1] != "s0" || a.Sources[2].Fields.Dedupe != "$.id" || !a.Routes[0].Investigate {
		t.Errorf("decoded %+v", a)
	}
	tests := []struct{ name, yaml, want string }{
		{"type", "alerts:\n  sources:\n    - {name: am, type: prometheus, token: x}\n  routes:\n    - post_to: {platform: web, channel: ops}\n",
			`c.yaml:3: alerts.sources[0].type: "prometheus" is not a source type: use alertmanager, grafana, pagerduty or generic`},
		{"name", "alerts:\n  sources:\n    - {name: A/B, type: alertmanager, token: x}\n  routes:\n    - post_to: {platform: web, channel: ops}\n",
			`c.yaml:3: alerts.sources[0].name: "A/B" cannot be part of the endpoint's path`},
		{"token on pagerduty", "alerts:\n  sources:\n    - {name: pd, type: pagerduty, token: x}\n  routes:\n    - post_to: {platform: web, channel: ops}\n",
			`alerts.sources[0].token: PagerDuty signs its webhooks rather than sending a token`},
		{"generic without dedupe", "alerts:\n  sources:\n    - name: ci\n      type: generic\n      token: x\n      fields: {title: $.t}\n  routes:\n    - post_to: {platform: web, channel: ops}\n",
			`alerts.sources[0].fields.dedupe: is missing`},
		{"path", "alerts:\n  sources:\n    - name: ci\n      type: generic\n      token: x\n      fields: {title: title, dedupe: $.id}\n  routes:\n    - post_to: {platform: web, channel: ops}\n",
			`alerts.sources[0].fields.title: "title" is not a JSON path: start it with $`},
		{"no route", "alerts:\n  sources:\n    - {name: am, type: alertmanager, token: x}\n",
			`alerts.routes: no route: alerts would be posted nowhere`},
		{"platform", "alerts:\n  routes:\n    - post_to: {platform: teams, channel: ops}\n",
			`alerts.routes[0].post_to.platform: "teams" is not a platform: use slack, discord or web`},
		{"regex", "alerts:\n  routes:\n    - match: {instance: \"=~db-(\"}\n      post_to: {platform: web, channel: ops}\n",
			`alerts.routes[0].match.instance: "db-(" is not a regular expression Go reads: missing closing )`},
		{"cooldown", "alerts:\n  cooldown: 30\n", `c.yaml:2: alerts.cooldown: expected a duration like 60s`},
		{"unknown key", "alerts:\n  max_concurent: 3\n", `alerts.max_concurent: unknown key (did you mean "max_concurrent"?)`},
	}
	for _, tt := range tests {
		_, err := parseConfig("c.yaml", []byte(tt.yaml), env(nil))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want %q", tt.name, err, tt.want)
		}
	}
}

// A source without its token, and a route to a platform that is off, are
// said at start rather than found when the first alert is lost.
func TestConfigCheckAlertWarnings(t *testing.T) {
	t.Parallel()
	data := "alerts:\n  sources:\n    - {name: am, type: alertmanager, token: \"${T:-}\"}\n  routes:\n    - post_to: {platform: slack, channel: C1}\n"
	cfg, err := parseConfig("c.yaml", []byte(data), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range cfg.alertWarnings() {
		got = append(got, w.Error())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		`c.yaml:3: alerts.sources[0].token: warning: source "am" has no token: POST /hooks/am answers 401 to every sender until it is set`,
		`c.yaml:5: alerts.routes[0].post_to.platform: warning: slack is off (slack.bot_token is not set)`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
}
