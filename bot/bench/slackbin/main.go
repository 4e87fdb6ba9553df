// Command slackbin measures the real opsbot binary answering many Slack
// threads at once (issue 28 item 4, issue 32 item 4): it builds opsbot
// (-tags sqlite_fts5), runs it as a child process against the fake Slack
// of the test tree (Web API with Slack's real tiers, and Socket Mode)
// served by this program, with a scripted OpenAI-compatible model that
// streams each answer of -chars characters over -duration, sends -answers
// mentions at once, and reports, in real time: 429s, the longest gap
// between visible updates of a thread, the first visible sign (a
// reaction on the question, or the first words), the first visible words, the
// final lag after the model ended, and the stream start/stop counts.
//
//	go run ./bot/bench/slackbin                  # 20 answers of 6,000 characters over 90 s
//	go run ./bot/bench/slackbin -answers 5
package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

// channel is where the mentions are.
const channel = "C0OPS"

func main() {
	answers := flag.Int("answers", 20, "mentions sent at once")
	chars := flag.Int("chars", 6000, "characters of each answer")
	duration := flag.Duration("duration", 90*time.Second, "how long the model takes to stream each answer")
	bin := flag.String("opsbot", "", "the opsbot binary (default: built from this checkout)")
	command := flag.String("command", "", "a command each answer runs first on the bot's host, as a task card (e.g. uptime)")
	flag.Parse()
	if err := run(*bin, *answers, *chars, *duration, *command); err != nil {
		fmt.Fprintln(os.Stderr, "slackbin:", err)
		os.Exit(1)
	}
}

func run(bin string, answers, chars int, duration time.Duration, command string) error {
	dir, err := os.MkdirTemp("", "opsbot-slackbin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if bin == "" {
		if bin, err = build(dir); err != nil {
			return err
		}
	}
	fake := slackfake.New()
	defer fake.Close()
	m := &model{chars: chars, duration: duration, command: command, began: map[int]time.Time{}, ended: map[int]time.Time{}}
	modelURL, stopModel, err := serve(m)
	if err != nil {
		return err
	}
	defer stopModel()
	stop, err := startOpsbot(bin, dir, fake.URL, modelURL, answers)
	if err != nil {
		return err
	}
	defer stop()
	select {
	case <-fake.Connected():
	case <-time.After(time.Minute):
		return errors.New("opsbot did not connect to the fake Slack within a minute")
	}
	start := time.Now()
	threads := ask(fake, answers)
	if !watch(fake, threads, duration+3*time.Minute) {
		report(fake, m, threads, time.Since(start))
		return errors.New("not every answer ended within 3 minutes of the model's time")
	}
	report(fake, m, threads, time.Since(start))
	return nil
}

// build builds opsbot from this checkout into dir.
func build(dir string) (string, error) {
	bin := filepath.Join(dir, "opsbot")
	cmd := exec.Command("go", "build", "-tags", "sqlite_fts5", "-o", bin, "./cmd/opsbot")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build opsbot (run from the repository's root): %w", err)
	}
	return bin, nil
}

// serve serves the scripted model on a loopback port.
func serve(m *model) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: m}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String() + "/v1", func() { srv.Close() }, nil
}

// startOpsbot runs `opsbot run` on a config of its own in dir, its log to
// a file there; stop interrupts it and waits for its exit.
func startOpsbot(bin, dir, slackURL, modelURL string, answers int) (stop func(), err error) {
	conf := fmt.Sprintf(`web:
  listen: 127.0.0.1:0
store:
  path: %s
bot:
  data_dir: %s
  max_turns: %d
slack:
  bot_token: %s
  app_token: %s
  api_url: %s
agent:
  provider: openai
  api_key: scripted
  base_url: %s
  model: scripted
`, filepath.Join(dir, "opsbot.db"), filepath.Join(dir, "data"), max(answers, 16), slackfake.BotToken, slackfake.AppToken, slackURL, modelURL)
	path := filepath.Join(dir, "opsbot.yaml")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "opsbot.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "run", "--config", path)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, err
	}
	return func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		log.Close()
	}, nil
}

// ask sends the mentions, each from a person of its own, at once.
func ask(fake *slackfake.Server, answers int) []*thread {
	threads := make([]*thread, answers)
	for i := range answers {
		user := fmt.Sprintf("U0USER%02d", i)
		fake.AddUser(user, fmt.Sprintf("user%02d", i))
		root := fake.Mention(channel, user, "", fmt.Sprintf("question %d: how is web?", i))
		threads[i] = &thread{n: i, ts: root.TS, asked: time.Now(), ending: fmt.Sprintf("End of answer %d.", i)}
	}
	return threads
}
