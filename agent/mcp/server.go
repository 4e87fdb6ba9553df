package mcp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// server is one configured MCP server: its connection, kept up by run,
// and the tools it listed last.
type server struct {
	name string
	cfg  ServerConfig // with defaults
	opt  *Options

	mu      sync.Mutex
	session *sdk.ClientSession
	// down says why the server is not connected, "" while it is.
	down  string
	tools []*sdk.Tool // as last listed, by name
	// first are the names of the first listing: a tool not among them
	// appeared later (Config.Decide's late).
	first map[string]bool
	// relist is signalled by the server's notifications/tools/list_changed.
	relist chan struct{}
	// tried is closed when the first attempt to connect has ended.
	tried     chan struct{}
	triedOnce sync.Once
}

func newServer(name string, cfg ServerConfig, opt *Options) *server {
	return &server{name: name, cfg: cfg.WithDefaults(), opt: opt, down: notYet, relist: make(chan struct{}, 1), tried: make(chan struct{})}
}

// notYet is why a server is down before its first attempt ends.
const notYet = "connecting"

// run keeps the server connected until ctx ends: it connects, lists the
// tools, follows list changes and pings; a lost connection is retried,
// waiting longer each time up to a minute.
func (s *server) run(ctx context.Context) {
	wait := s.opt.retry()
	for ctx.Err() == nil {
		if err := s.connectAndServe(ctx); err != nil && ctx.Err() == nil && s.setDown(err.Error()) {
			// Said once per reason, not at every retry.
			s.opt.Log.Warn("mcp server down", "server", s.name, "why", err.Error())
		}
		s.triedOnce.Do(func() { close(s.tried) })
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Minute)
	}
	s.setDown("opsbot is stopping")
}

// connectAndServe holds one connection until it fails or ctx ends.
func (s *server) connectAndServe(ctx context.Context) error {
	conn, err := s.dial(ctx)
	if err != nil {
		return err
	}
	defer conn.close()
	if err := s.list(ctx, conn.session); err != nil {
		return err
	}
	s.mu.Lock()
	s.session, s.down = conn.session, ""
	s.mu.Unlock()
	s.triedOnce.Do(func() { close(s.tried) })
	s.opt.Log.Info("mcp server up", "server", s.name, "tools", len(s.snapshot().tools))
	s.opt.changed(s.name)
	defer func() {
		s.mu.Lock()
		s.session = nil
		s.mu.Unlock()
	}()
	return s.serve(ctx, conn.session)
}

// serve follows the connection: it lists the tools again when the server
// says they changed, and pings it now and then; it returns when the
// connection ends, a ping fails or ctx ends.
func (s *server) serve(ctx context.Context, cs *sdk.ClientSession) error {
	ended := make(chan struct{})
	go func() {
		cs.Wait()
		close(ended)
	}()
	ping := time.NewTicker(s.opt.pingEvery())
	defer ping.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ended:
			return errors.New("the connection ended")
		case <-s.relist:
			if err := s.list(ctx, cs); err != nil {
				return err
			}
			s.opt.changed(s.name)
		case <-ping.C:
			pctx, cancel := context.WithTimeout(ctx, s.patience())
			err := cs.Ping(pctx, nil)
			cancel()
			if err != nil {
				return fmt.Errorf("no answer to a ping within %s", s.patience())
			}
		}
	}
}

// list reads the server's tools; the first listing is the set that is not
// late.
func (s *server) list(ctx context.Context, cs *sdk.ClientSession) error {
	ctx, cancel := context.WithTimeout(ctx, s.patience())
	defer cancel()
	var tools []*sdk.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("listing its tools failed: %s", words(err))
		}
		tools = append(tools, t)
	}
	slices.SortFunc(tools, func(a, b *sdk.Tool) int { return strings.Compare(a.Name, b.Name) })
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tools = tools
	if s.first == nil {
		s.first = map[string]bool{}
		for _, t := range tools {
			s.first[t.Name] = true
		}
	}
	return nil
}

// patience bounds what is not a call (connecting, listing, a ping): a
// short call timeout must not keep a slow-starting server down.
func (s *server) patience() time.Duration { return max(s.cfg.Timeout, 30*time.Second) }

// listChanged is the client's handler of notifications/tools/list_changed:
// the listing itself happens in serve, off the connection's own goroutine.
func (s *server) listChanged(context.Context, *sdk.ToolListChangedRequest) {
	select {
	case s.relist <- struct{}{}:
	default: // a listing is due already
	}
}

// setDown records why the server is down; changed reports whether that
// is news.
func (s *server) setDown(why string) (changed bool) {
	s.mu.Lock()
	changed = s.down != why
	s.down = why
	s.mu.Unlock()
	if changed {
		s.opt.changed(s.name)
	}
	return changed
}

// snapshot is the server's state at one moment.
type snapshot struct {
	session *sdk.ClientSession
	down    string
	tools   []*sdk.Tool
	first   map[string]bool
}

func (s *server) snapshot() snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return snapshot{s.session, s.down, s.tools, s.first}
}

// verdict is the config's decision on tool, late when the server listed it
// after its first listing.
func (s *server) verdict(all Config, tool string) Verdict {
	snap := s.snapshot()
	return all.Decide(s.name, tool, snap.first != nil && !snap.first[tool])
}

// errUnavailable is a call to a server that is not connected.
var errUnavailable = errors.New("unavailable")

// call calls tool with args under the server's time limit.
func (s *server) call(ctx context.Context, tool string, args []byte) (*sdk.CallToolResult, error) {
	cs := s.snapshot().session
	if cs == nil {
		return nil, errUnavailable
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	return cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: rawJSON(args)})
}

// words is an error from the SDK or the network, for people: its last
// part, without the chain of prefixes.
func words(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 && i+2 < len(msg) {
		return msg[i+2:]
	}
	return msg
}
