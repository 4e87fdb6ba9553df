package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/mcp"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/store"
)

// addMCP offers the configured MCP servers' tools to the agent through
// guard's approver, connecting to the servers the first time: in the
// background, so that a server that is down delays neither the start nor
// a turn. /readyz shows each server's state and metrics count it.
func (rt *parts) addMCP(reg *agent.Registry, guard *approvals.Guard) {
	if len(rt.cfg.MCP.Servers) == 0 {
		return
	}
	if rt.mcp == nil {
		rt.mcp = mcp.Start(rt.cfg.MCP, mcp.Options{Approver: guard.Approver, FollowUps: rt.store.Approvals(),
			Audit: mcpAudit{rt.store}, Redactor: rt.red, Log: rt.log, Fence: rt.fence.err})
		for _, name := range rt.cfg.MCP.Names() {
			rt.ready.Detail("mcp "+name, func() (bool, string) { return mcpDetail(rt.mcp, name) })
		}
		if err := rt.metrics.reg.Register(mcpUp{rt.mcp}); err != nil {
			rt.log.Error("register the MCP metrics", "err", err)
		}
		// The first turn may start at once (opsbot ask): give the servers
		// a moment to answer, not more; one that is slower joins later.
		ctx, cancel := context.WithTimeout(context.Background(), mcpSettle)
		rt.mcp.Settle(ctx)
		cancel()
	}
	reg.AddSource(rt.mcp)
}

// mcpSettle is how long the agent's start waits for the MCP servers'
// first answers.
const mcpSettle = 10 * time.Second

// mcpDetail is a server's line in /readyz: "up, 3 tools" or why it is
// down. A server that is down does not make opsbot unready: its tools
// answer "unavailable" and the rest works.
func mcpDetail(s *mcp.Servers, name string) (bool, string) {
	for _, st := range s.Status() {
		if st.Name == name {
			if st.Up {
				return true, fmt.Sprintf("up, %d tools", len(st.Tools))
			}
			return false, "down: " + st.Down
		}
	}
	return false, "not configured"
}

// mcpAudit is the store's audit trail as agent/mcp sees it.
type mcpAudit struct{ st *store.Store }

var _ mcp.Auditor = mcpAudit{}

// Audit appends e to the audit trail.
func (a mcpAudit) Audit(ctx context.Context, e mcp.AuditEntry) error {
	return a.st.Audit().Audit(ctx, store.AuditEntry{At: e.At, Actor: e.Actor, Action: e.Action, Subject: e.Subject, Detail: e.Detail})
}

// mcpUp is opsbot_mcp_server_up{server}: 1 while opsbot is connected to
// the server, else 0.
type mcpUp struct{ s *mcp.Servers }

var descMCPUp = prometheus.NewDesc("opsbot_mcp_server_up",
	"1 while opsbot is connected to the MCP server, else 0 (its tools answer unavailable).", []string{"server"}, nil)

var _ prometheus.Collector = mcpUp{}

// Describe sends the one descriptor.
func (m mcpUp) Describe(ch chan<- *prometheus.Desc) { ch <- descMCPUp }

// Collect reports each server's state as last seen.
func (m mcpUp) Collect(ch chan<- prometheus.Metric) {
	for _, st := range m.s.Status() {
		up := 0.0
		if st.Up {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(descMCPUp, prometheus.GaugeValue, up, st.Name)
	}
}

// mcpWarnings say, for config check and the log at start, which stdio MCP
// server's command cannot start here: not found (a bare name is looked up
// in opsbot's own PATH, as the server is started), or not executable.
// The config is valid all the same: the server stays down, and /readyz
// says why.
func (c *Config) mcpWarnings() []*ConfigError {
	var out []*ConfigError
	for _, name := range c.MCP.Names() {
		s := c.MCP.Servers[name]
		if s.Command == "" {
			continue
		}
		if why := commandProblem(s.Command); why != "" {
			out = append(out, c.warning("mcp.servers."+name+".command", why+"; until it is, this server stays down and the agent has none of its tools"))
		}
	}
	return out
}

// commandProblem says why command cannot be started, in words with what
// to do, or "".
func commandProblem(command string) string {
	_, err := exec.LookPath(command)
	switch {
	case err == nil:
		return ""
	case errors.Is(err, fs.ErrPermission):
		return fmt.Sprintf("%q is not executable: make it so (chmod +x %s), or name the program that runs it", command, command)
	case strings.ContainsRune(command, '/'):
		return fmt.Sprintf("%q does not exist: install it there, or correct the path", command)
	}
	return fmt.Sprintf("%q is not found on opsbot's PATH: install it, or give its full path", command)
}
