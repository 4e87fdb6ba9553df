package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/opsbot/opsbot/bot"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/web"
)

// router is a connector that serves HTTP routes of its own on the shared
// listener, beside /healthz, /readyz and /metrics (Slack's HTTP mode:
// /slack/events, /slack/actions).
type router interface {
	Routes(mux *http.ServeMux)
}

// readier is a connector that can say whether it is connected to its
// platform (a Socket Mode or gateway connection that is down).
type readier interface {
	Ready(ctx context.Context) error
}

// runner is a connector that says when its events start reaching the
// handler.
type runner interface {
	Running() <-chan struct{}
}

// webRouter mounts the web chat's page and API at "/".
type webRouter struct{ c *web.Connector }

func (w webRouter) Routes(mux *http.ServeMux) { mux.Handle("/", w.c.Handler()) }

var _ router = webRouter{}

// newConnectors builds every configured connector, each with the HTTP
// routes it serves (nil when none): the web chat, and Slack when
// slack.bot_token is set.
func (rt *parts) newConnectors(ctx context.Context) ([]connectors.Connector, []router, error) {
	webConn, err := web.New(ctx, rt.cfg.Web, rt.store.Web())
	if err != nil {
		return nil, nil, err
	}
	webConn.Log = rt.log.With("connector", web.Platform)
	webConn.Redact = rt.red.String // a secret a person types is kept nowhere
	webConn.Postmortem = rt.webPostmortem
	webConn.Models = func() []string {
		if rt.provider == nil {
			return nil
		}
		return []string{rt.modelName}
	}
	conns, routers := []connectors.Connector{webConn}, []router{webRouter{webConn}}
	slackConn, err := rt.newSlack()
	if err != nil {
		return nil, nil, err
	}
	if slackConn != nil {
		conns, routers = append(conns, slackConn), append(routers, slackConn)
	}
	discordConn, err := rt.newDiscord()
	if err != nil {
		return nil, nil, err
	}
	if discordConn != nil {
		conns = append(conns, discordConn)
	}
	return conns, routers, nil
}

// connectorSet runs each connector with its own lifecycle: one that stops
// on its own is logged and reported not ready; the others go on.
type connectorSet struct {
	list []connectors.Connector
	log  *slog.Logger

	wg      sync.WaitGroup
	mu      sync.Mutex
	stopped map[string]error // connectors whose Start returned before shutdown
}

// start starts every connector, each handing its events to h until ctx
// ends, and returns once those that can say so hand events on: "started"
// means a message posted now reaches the bot.
func (s *connectorSet) start(ctx context.Context, h connectors.Handler) {
	s.stopped = map[string]error{}
	for _, c := range s.list {
		exited := make(chan struct{})
		s.wg.Go(func() {
			defer close(exited)
			err := c.Start(ctx, h)
			if ctx.Err() != nil {
				return // shutdown
			}
			if err == nil {
				err = errors.New("it stopped receiving events")
			}
			s.log.Error("a connector stopped; the others go on", "connector", c.Name(), "err", err)
			s.mu.Lock()
			s.stopped[c.Name()] = err
			s.mu.Unlock()
		})
		if r, ok := c.(runner); ok {
			select {
			case <-r.Running():
			case <-exited:
			}
		}
	}
}

// wait waits for every connector's Start to return.
func (s *connectorSet) wait() { s.wg.Wait() }

// ready reports whether connector c is up: its Start still runs, and it
// says it is connected when it can tell.
func (s *connectorSet) ready(ctx context.Context, c connectors.Connector) error {
	s.mu.Lock()
	err := s.stopped[c.Name()]
	s.mu.Unlock()
	if err != nil {
		return err
	}
	if r, ok := c.(readier); ok {
		return r.Ready(ctx)
	}
	return nil
}

// onBusy is bot.on_busy, or the deprecated web.on_busy it replaced (see
// warnings), or the default.
func (c *Config) onBusy() string {
	if c.Bot.OnBusy != "" {
		return c.Bot.OnBusy
	}
	if _, set := c.lines["web.on_busy"]; set {
		return c.Web.OnBusy
	}
	return bot.OnBusyQueue
}

// deprecatedKeys are keys still read that the example no longer shows.
var deprecatedKeys = map[string]bool{"web.on_busy": true}

// warnings are the problems of a valid config, for config check and the
// log at start: nobody may approve; a token in the environment for a
// connector that stays off; a secret written into the file; a deprecated
// key.
func (c *Config) warnings() []*ConfigError {
	w := append(c.approvalWarnings(), c.tokenEnvWarnings()...)
	w = append(w, c.literalSecrets...)
	w = append(w, c.mcpWarnings()...)
	if line, set := c.lines["web.on_busy"]; set {
		w = append(w, &ConfigError{File: c.file, Line: line, Key: "web.on_busy",
			Msg: "is deprecated: it applies to every platform now; move it to bot.on_busy (used meanwhile when bot.on_busy is not set)"})
	}
	return w
}

// tokenEnv names the environment variables that hold a connector's
// tokens, as deploy/opsbot.env.example, the image's config and the Helm
// chart spell them, with the keys that read them (the first turns the
// connector on).
var tokenEnv = []struct {
	platform string
	vars     []string // each NAME, read by keys[i]
	keys     []string
	on       func(*Config) bool
}{
	{"Slack", []string{"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN"}, []string{"slack.bot_token", "slack.app_token"},
		func(c *Config) bool { return c.Slack.Enabled() }},
	{"Discord", []string{"DISCORD_BOT_TOKEN"}, []string{"discord.token"},
		func(c *Config) bool { return c.Discord.Enabled() }},
}

// tokenSnapshot reads the connectors' token variables through lookup now
// and answers later lookups of them from what it read.
func tokenSnapshot(lookup func(string) (string, bool)) func(string) (string, bool) {
	if lookup == nil {
		return nil
	}
	held := map[string]string{}
	for _, t := range tokenEnv {
		for _, name := range t.vars {
			if v, ok := lookup(name); ok {
				held[name] = v
			}
		}
	}
	return func(name string) (string, bool) {
		v, ok := held[name]
		return v, ok
	}
}

// tokenEnvWarnings: a token set in the environment for a connector the
// config leaves off would otherwise be ignored without a word (a config
// without a slack: or discord: section, or one reading another variable).
func (c *Config) tokenEnvWarnings() []*ConfigError {
	if c.env == nil {
		return nil
	}
	var out []*ConfigError
	for _, t := range tokenEnv {
		var set []string
		for _, name := range t.vars {
			if v, ok := c.env(name); ok && v != "" {
				set = append(set, name)
			}
		}
		if len(set) == 0 || t.on(c) {
			continue
		}
		section, _, _ := strings.Cut(t.keys[0], ".")
		fix := "\n    " + section + ":"
		for i, k := range t.keys {
			fix += fmt.Sprintf("\n      %s: ${%s}", strings.TrimPrefix(k, section+"."), t.vars[i])
		}
		out = append(out, c.warning(t.keys[0], fmt.Sprintf("%s set in the environment, but %s stays off: %s; to turn it on, write%s",
			strings.Join(set, " and ")+isAre(len(set)), t.platform, c.emptyKeyReason(t.keys[0]), fix)))
	}
	return out
}

func isAre(n int) string {
	if n == 1 {
		return " is"
	}
	return " are"
}

// emptyKeyReason says why a connector's token key is empty.
func (c *Config) emptyKeyReason(key string) string {
	switch {
	case c.file == "":
		return "the embedded default has no " + key + " (give a config file with --config)"
	case c.lines[key] > 0:
		return key + " is empty"
	}
	return "the config sets no " + key
}
