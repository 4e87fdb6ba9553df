package slack_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/slack"
	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

// wait bounds a wait for an event: a guard against a hang, not a pace.
const wait = 30 * time.Second

// logBuffer collects log lines.
type logBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	return len(p), nil
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.buf)
}

// rig is a connector over a fake Slack, started, its events on events.
type rig struct {
	fake   *slackfake.Server
	conn   *slack.Connector
	events chan connectors.Event
	logs   *logBuffer
	done   chan error
	// refuse, while set, makes the handler refuse each event it is
	// handed (as the bot does one it could not record).
	refuse atomic.Bool
	// stop stops the connector and waits until Start returned.
	stop func()
}

// startRig starts a connector in socket mode over a new fake and waits
// for its Socket Mode connection.
func startRig(t *testing.T, cfg slack.Config, opt slack.Options) *rig {
	t.Helper()
	fake := slackfake.New()
	t.Cleanup(fake.Close)
	return startOn(t, fake, cfg, opt, true)
}

func startOn(t *testing.T, fake *slackfake.Server, cfg slack.Config, opt slack.Options, waitSocket bool) *rig {
	t.Helper()
	if cfg.BotToken == "" {
		cfg.BotToken = slackfake.BotToken
	}
	if cfg.AppToken == "" && cfg.Mode != slack.ModeHTTP {
		cfg.AppToken = slackfake.AppToken
	}
	cfg.APIURL = fake.URL
	r := &rig{fake: fake, events: make(chan connectors.Event, 100), logs: &logBuffer{}, done: make(chan error, 1)}
	opt.Log = slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if opt.HTTPClient == nil {
		opt.HTTPClient = &http.Client{Timeout: wait}
	}
	c, err := slack.New(cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	r.conn = c
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		r.done <- c.Start(ctx, func(_ context.Context, ev connectors.Event) error {
			r.events <- ev
			if r.refuse.Load() {
				return fmt.Errorf("%w: its database did not answer within 2s", connectors.ErrNotRecorded)
			}
			return nil
		})
	}()
	var once sync.Once
	r.stop = func() { once.Do(func() { cancel(); <-r.done }) }
	t.Cleanup(r.stop)
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(r.logs.String())
		}
	})
	if waitSocket {
		r.connected(t)
	}
	return r
}

// connected waits for the next Socket Mode connection.
func (r *rig) connected(t *testing.T) {
	t.Helper()
	select {
	case <-r.fake.Connected():
	case err := <-r.done:
		t.Fatalf("the connector stopped before it connected: %v", err)
	case <-time.After(wait):
		t.Fatal("the connector never opened a Socket Mode connection")
	}
}

// next waits for the next event handed to the bot.
func (r *rig) next(t *testing.T) connectors.Event {
	t.Helper()
	select {
	case ev := <-r.events:
		return ev
	case <-time.After(wait):
		t.Fatal("no event reached the handler")
	}
	return connectors.Event{}
}

// acked waits for envelope id's acknowledgement.
func (r *rig) acked(t *testing.T, id string) {
	t.Helper()
	select {
	case <-r.fake.Acked(id):
	case <-time.After(wait):
		t.Fatalf("envelope %s was never acknowledged", id)
	}
}
