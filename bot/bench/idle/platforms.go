package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/opsbot/opsbot/bot"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/web"
	"github.com/opsbot/opsbot/store"
)

// asker starts thread i with a question to the bot.
type asker func(ctx context.Context, b *bot.Bot, i int) error

func newPlatform(ctx context.Context, name string, st *store.Store) (connectors.Connector, asker, error) {
	switch name {
	case "web":
		return newWeb(ctx, st)
	case "null":
		c := &nullConn{}
		return c, c.ask, nil
	}
	return nil, nil, fmt.Errorf("-connector %q: want web or null", name)
}

// newWeb is the embedded web chat with its messages kept in SQLite, as
// `opsbot run` builds it; a person's question goes through its HTTP API
// (in process, no socket), as the page sends it.
func newWeb(ctx context.Context, st *store.Store) (connectors.Connector, asker, error) {
	c, err := web.New(ctx, web.Config{}, st.Web())
	if err != nil {
		return nil, nil, err
	}
	api := c.Handler()
	var once sync.Once
	ask := func(ctx context.Context, b *bot.Bot, i int) error {
		once.Do(func() { go c.Start(ctx, b.Handle) })
		body := fmt.Sprintf(`{"channel":"ops","user":"alice","text":"@opsbot how are the disks? (%d)"}`, i)
		for wait := time.Millisecond; ; wait *= 2 {
			req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/api/messages", strings.NewReader(body))
			req.RemoteAddr, req.Host = "127.0.0.1:50000", "127.0.0.1:8080"
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			api.ServeHTTP(rec, req)
			switch {
			case rec.Code == http.StatusCreated:
				return nil
			case rec.Code == http.StatusServiceUnavailable && wait < time.Second: // Start not running yet
				time.Sleep(wait)
			default:
				return fmt.Errorf("web: post: %d %s", rec.Code, rec.Body)
			}
		}
	}
	return c, ask, nil
}

// nullConn is a platform that keeps nothing, like Slack or Discord seen
// from the bot's process: what remains in memory is the bot's own.
type nullConn struct{ next atomic.Int64 }

var (
	_ connectors.Connector = (*nullConn)(nil)
	_ connectors.Streamer  = (*nullConn)(nil)
)

func (c *nullConn) Name() string { return "null" }

// Limits: answers stream, as on Slack.
func (c *nullConn) Limits() connectors.Limits {
	return connectors.Limits{MaxText: 4000, NativeStreaming: true}
}

func (c *nullConn) Start(ctx context.Context, _ connectors.Handler) error {
	<-ctx.Done()
	return nil
}

func (c *nullConn) Post(_ context.Context, d connectors.Dest, _ connectors.Message) (connectors.Ref, error) {
	return connectors.Ref{Platform: c.Name(), Channel: d.Channel, Thread: d.Thread, ID: strconv.FormatInt(c.next.Add(1), 10)}, nil
}

func (c *nullConn) StartStream(ctx context.Context, d connectors.Dest, m connectors.Message) (connectors.Ref, error) {
	return c.Post(ctx, d, m)
}

func (c *nullConn) AppendStream(context.Context, connectors.Ref, string) error { return nil }

func (c *nullConn) StopStream(context.Context, connectors.Ref, connectors.Message) error { return nil }

func (c *nullConn) Edit(context.Context, connectors.Ref, connectors.Message) error { return nil }

func (c *nullConn) ask(ctx context.Context, b *bot.Bot, i int) error {
	th := "t" + strconv.Itoa(i)
	b.Handle(ctx, connectors.Event{ID: th, Kind: connectors.EventMessage, Platform: c.Name(), Channel: "C1", Thread: th,
		User: connectors.User{ID: "alice", Name: "alice"}, Text: "how are the disks?", Mention: true})
	return nil
}
