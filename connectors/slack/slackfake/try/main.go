// Command try checks the Slack connector without a browser or a Slack
// workspace: it starts the fake Slack, runs opsbot against it (the binary
// given by -opsbot, with a config of its own in a temporary folder), sends
// one mention as alice, waits for the answer, and prints the thread.
//
//	go build -o bin/opsbot ./cmd/opsbot
//	go run ./connectors/slack/slackfake/try -opsbot bin/opsbot "run local uptime"
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

func main() {
	bin := flag.String("opsbot", "bin/opsbot", "the opsbot binary to run")
	wait := flag.Duration("wait", time.Minute, "how long to wait for the answer")
	flag.Parse()
	text := strings.Join(flag.Args(), " ")
	if text == "" {
		text = "run local uptime"
	}
	if err := try(*bin, text, *wait); err != nil {
		fmt.Fprintln(os.Stderr, "try:", err)
		os.Exit(1)
	}
}

func try(bin, text string, wait time.Duration) error {
	fake := slackfake.New()
	defer fake.Close()
	dir, err := os.MkdirTemp("", "opsbot-try-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// The tokens come from the environment, as the config check asks of
	// a real one, and bob may approve alice's requests: a config that
	// draws no warning, so that what try prints is the thread.
	conf := fmt.Sprintf("web:\n  listen: 127.0.0.1:0\nstore:\n  path: %s\nbot:\n  data_dir: %s\n"+
		"slack:\n  bot_token: ${SLACK_BOT_TOKEN}\n  app_token: ${SLACK_APP_TOKEN}\n  api_url: %s\n"+
		"approvals:\n  approvers:\n    - slack:\n        users: [U0BOB]\n",
		filepath.Join(dir, "opsbot.db"), filepath.Join(dir, "data"), fake.URL)
	path := filepath.Join(dir, "opsbot.yaml")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		return err
	}
	cmd := exec.Command(bin, "run", "--config", path)
	cmd.Env = append(os.Environ(), "SLACK_BOT_TOKEN="+slackfake.BotToken, "SLACK_APP_TOKEN="+slackfake.AppToken)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w (build it: go build -o bin/opsbot ./cmd/opsbot)", bin, err)
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	select {
	case <-fake.Connected():
	case <-time.After(wait):
		return fmt.Errorf("opsbot did not connect to the fake Slack within %s", wait)
	}
	m := fake.Mention("C0OPS", "U0ALICE", "", text)
	answered := fake.WaitFor(wait, func(s *slackfake.Server) bool {
		for _, msg := range s.Thread("C0OPS", m.Thread) {
			if msg.Bot && !msg.Streaming && len(msg.Buttons()) == 0 {
				return true
			}
		}
		return false
	})
	fmt.Print(fake.ThreadText("C0OPS", m.Thread))
	if !answered {
		return fmt.Errorf("no finished answer within %s", wait)
	}
	return nil
}
