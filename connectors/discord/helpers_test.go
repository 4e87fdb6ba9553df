package discord

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/discord/discordtest"
)

// testToken has the shape of a bot token: the bot's id in base64, a
// timestamp, an HMAC.
const testToken = "MTEwMDAwMDAwMDAwMDAwMDAwMQ.GhT3xq.k9Vz2pLqR8mW4nXc7YbJd1sFg0Ua5TiOeZrQwE"

// legacy is the config of the rendering before Components V2.
var legacy = Config{ComponentsV2: new(false)}

// wait bounds a wait for an event: a guard against a hang, not a pace.
const wait = 30 * time.Second

// started is a connector over a fake Discord, started, whose events
// arrive on the returned channel.
func started(t *testing.T, f *discordtest.Fake, cfg Config) (*Connector, <-chan connectors.Event) {
	t.Helper()
	return startedWith(t, f, cfg, nil)
}

// startedWith is started whose handler answers each event with refuse's
// error (nil refuse: every event is taken).
func startedWith(t *testing.T, f *discordtest.Fake, cfg Config, refuse func(connectors.Event) error) (*Connector, <-chan connectors.Event) {
	t.Helper()
	cfg.Token, cfg.APIURL = testToken, f.URL
	c, err := New(cfg, Options{Log: slog.New(slog.DiscardHandler), StuckAfter: stuckAfter})
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan connectors.Event, 1000)
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	done := make(chan error, 1)
	go func() {
		done <- c.Start(ctx, func(_ context.Context, ev connectors.Event) error {
			events <- ev
			if refuse != nil {
				return refuse(ev)
			}
			return nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	})
	select {
	case <-c.Running():
	case err := <-done:
		t.Fatalf("Start returned %v", err)
	}
	if err := c.Ready(t.Context()); err != nil {
		t.Fatalf("not ready after Running: %v", err)
	}
	return c, events
}

// next is the next event of kind, or a failure after wait.
func next(t *testing.T, events <-chan connectors.Event, kind connectors.EventKind) connectors.Event {
	t.Helper()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case ev := <-events:
			if ev.Kind == kind {
				return ev
			}
		case <-timer.C:
			t.Fatalf("no event of kind %d came", kind)
		}
	}
}

// newFake is a fake Discord that accepts testToken.
func newFake(t *testing.T) *discordtest.Fake {
	return discordtest.New(t, testToken)
}

// stuckAfter is short in tests, long enough that a resume on a loaded
// machine is not taken for a stuck session (the fake answers at once).
const stuckAfter = 5 * time.Second
