package discord

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// holdingNetwork holds the first n calls and then lets them through
// together, as a loaded machine or a congested network may: calls sent
// far apart arrive at Discord in the same instant.
type holdingNetwork struct {
	n       int
	mu      sync.Mutex
	held    int
	release chan struct{}
}

func (h *holdingNetwork) RoundTrip(req *http.Request) (*http.Response, error) {
	h.mu.Lock()
	hold := h.held < h.n
	if hold {
		h.held++
		if h.held == h.n {
			close(h.release)
		}
	}
	h.mu.Unlock()
	if hold {
		select {
		case <-h.release:
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
	return http.DefaultTransport.RoundTrip(req)
}

// TestGlobalLimitSurvivesANetworkThatBunchesCalls: the connector's calls
// stay under Discord's global limit as Discord counts them, on arrival,
// even when the network holds calls sent apart and delivers them in one
// burst. Pacing departures alone would let the held calls and the next
// second's land together.
func TestGlobalLimitSurvivesANetworkThatBunchesCalls(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	var chans []string
	for i := range 120 {
		chans = append(chans, f.AddChannel(guild, fmt.Sprint("c", i)))
	}
	network := &holdingNetwork{n: globalMax, release: make(chan struct{})}
	c, err := New(Config{Token: testToken, APIURL: f.URL}, Options{Transport: network, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, ch := range chans {
		wg.Go(func() {
			if _, err := c.channel(t.Context(), ch); err != nil {
				t.Errorf("lookup: %v", err)
			}
		})
	}
	wg.Wait()
	if n := count429(f); n != 0 {
		t.Errorf("%d answers 429 (global limit) after the network bunched %d calls; want 0", n, globalMax)
	}
}

// A call counts from when it goes until a second after its answer: with
// the window full, the next call waits for the oldest answer's second to
// pass, or for its context.
func TestGlobalWindowCountsASecondPastTheAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newGlobalWindow(2, time.Second)
		start := time.Now()
		for range 2 {
			if err := w.acquire(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(300 * time.Millisecond) // the first answer takes 300 ms (the bubble's clock)
		w.done()
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := w.acquire(ctx); err == nil {
			t.Fatal("a third call went while two counted in the window")
		}
		if err := w.acquire(t.Context()); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited != 1300*time.Millisecond {
			t.Errorf("the third call went after %v; want 1.3s (a second past the first answer)", waited)
		}
	})
}
