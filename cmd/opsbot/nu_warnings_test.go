package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

// The start-up's config warnings read as plain words a person can act
// on: no redaction tag in place of "warning" (the log's redactor read
// "bot_token: warning: …" as a secret assigned) and no YAML example
// escaped into "\n" inside the log line.
func TestNuStartWarningsReadPlainly(t *testing.T) {
	t.Parallel()
	fake := slackfake.New()
	defer fake.Close()
	dir := t.TempDir()
	conf := filepath.Join(dir, "opsbot.yaml")
	os.WriteFile(conf, []byte("web:\n  listen: 127.0.0.1:0\nstore:\n  path: "+filepath.Join(dir, "o.db")+
		"\nslack:\n  bot_token: "+slackfake.BotToken+"\n  app_token: "+slackfake.AppToken+"\n  api_url: "+fake.URL+"\n"), 0o600)
	cmd := opsbot(t, dir, "run", "--config", conf)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	var warnings []string
	for sc := bufio.NewScanner(stderr); sc.Scan(); {
		line := sc.Text()
		if strings.Contains(line, "WARN") {
			warnings = append(warnings, line)
		}
		if strings.Contains(line, "opsbot started") {
			break
		}
	}
	if len(warnings) < 3 {
		t.Fatalf("want the approver and two token warnings before the start, got %q", warnings)
	}
	for _, w := range warnings {
		if strings.Contains(w, "[redacted") || strings.Contains(w, `\n`) {
			t.Errorf("warning shows a redaction tag or an escaped YAML example: %s", w)
		}
	}
	if all := strings.Join(warnings, "\n"); !strings.Contains(all, "approvers: [{slack: {users: [") || !strings.Contains(all, "${SLACK_BOT_TOKEN}") {
		t.Errorf("warnings do not say what to write:\n%s", all)
	}
}
