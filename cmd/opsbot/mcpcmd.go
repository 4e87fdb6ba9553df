package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/opsbot/opsbot/agent/mcp"
)

func newMCPCmd() *cobra.Command {
	c := &cobra.Command{
		Use:     "mcp",
		Example: "  opsbot mcp list --config /etc/opsbot/opsbot.yaml",
		Short:   "Work with the MCP tool servers of the config",
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError(errors.New("say what to do with the MCP servers: 'opsbot mcp list --config FILE'"))
		},
	}
	c.AddCommand(newMCPListCmd())
	return c
}

func newMCPListCmd() *cobra.Command {
	var wait time.Duration
	c := &cobra.Command{
		Use: "list [--config FILE] [--wait DURATION]",
		Example: "  opsbot mcp list --config /etc/opsbot/opsbot.yaml\n" +
			"  GRAFANA_MCP_TOKEN=… opsbot mcp list --config /etc/opsbot/opsbot.yaml --wait 1m",
		Short: "Connect to each MCP server of the config and list its tools with opsbot's decisions",
		Long: `Connect to each server of mcp.servers as 'opsbot run' would (a stdio server is started
with only its env), list its tools, and print for each the decision opsbot makes:
allow (runs at once), approve (waits for a person other than the requester) or deny
(never offered to the model), with the reason and the server's hints (shown on
approval cards, never used to decide).

Exit codes: 0 every server answered, 1 a server is down, 2 usage or configuration
error.`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfigFlag(cmd)
			if err != nil {
				return err
			}
			return mcpList(cmd.Context(), cmd.OutOrStdout(), cfg.MCP, wait)
		},
	}
	c.Flags().DurationVar(&wait, "wait", 30*time.Second, "how long to wait for the servers to answer")
	return c
}

// mcpList connects to the servers, waits until each answered or failed
// (or wait passed), and prints their tools with the decisions.
func mcpList(ctx context.Context, w io.Writer, cfg mcp.Config, wait time.Duration) error {
	if len(cfg.Servers) == 0 {
		fmt.Fprintln(w, "No MCP server is configured (mcp.servers in the config file; see docs/MCP.md).")
		return nil
	}
	s := mcp.Start(cfg, mcp.Options{})
	defer s.Close()
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	s.Settle(wctx)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return printMCP(w, cfg, s.Status())
}

// printMCP prints each server and its tools; a server down is exit 1.
func printMCP(w io.Writer, cfg mcp.Config, st []mcp.Status) error {
	down := 0
	for _, s := range st {
		sc := cfg.Servers[s.Name]
		where := sc.URL
		if sc.Type == mcp.TypeStdio {
			where = strings.Join(append([]string{sc.Command}, sc.Args...), " ")
		}
		state := fmt.Sprintf("up, %d tools", len(s.Tools))
		switch {
		case s.Connecting:
			state, down = "no answer within --wait", down+1
		case !s.Up:
			state, down = "down: "+s.Down, down+1
		}
		fmt.Fprintf(w, "%s (%s %s): %s\n", s.Name, sc.Type, where, state)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, t := range s.Tools {
			fmt.Fprintf(tw, "  %s\t%s\t%s\thints: %s\n", mcp.ToolName(s.Name, t.Name), t.Verdict.Decision, t.Verdict.Reason, t.Hints)
		}
		tw.Flush()
	}
	if down > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%d MCP server(s) down", down), silent: true}
	}
	return nil
}

// mcpPolicyCheck prints the config's decision on SERVER/TOOL as policy
// check does for a command, and maps it to the same exit codes.
func mcpPolicyCheck(w io.Writer, cfg mcp.Config, spec string) error {
	server, tool, ok := strings.Cut(spec, "/")
	if !ok || server == "" || tool == "" {
		return usageError(fmt.Errorf("--mcp takes SERVER/TOOL, e.g. --mcp grafana/query_prometheus, not %q", spec))
	}
	if _, known := cfg.Servers[server]; !known {
		return usageError(fmt.Errorf("no MCP server %q in mcp.servers (the servers: %s)", server, orNone(cfg.Names())))
	}
	v := cfg.Decide(server, tool, false)
	fmt.Fprintln(w, v.Decision)
	fmt.Fprintln(w, v.Reason)
	if late := cfg.Decide(server, tool, true); late.Decision != v.Decision {
		fmt.Fprintf(w, "if %s appears on %s after opsbot connected: %s (%s)\n", tool, server, late.Decision, late.Reason)
	}
	switch v.Decision {
	case mcp.Allow:
		return nil
	case mcp.Approve:
		return &exitError{code: exitApprove, err: errors.New("approve"), silent: true}
	}
	return &exitError{code: exitDeny, err: errors.New("deny"), silent: true}
}
