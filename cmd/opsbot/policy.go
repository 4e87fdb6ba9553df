package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/policy"
)

// Exit codes of 'opsbot policy check' for its two non-allow decisions.
const (
	exitApprove = 3
	exitDeny    = 4
)

func newPolicyCmd() *cobra.Command {
	c := &cobra.Command{
		Use:     "policy",
		Example: "  opsbot policy check -- 'systemctl restart nginx'",
		Short:   "Work with the command policy",
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError(errors.New("say what to do with the policy: 'opsbot policy check -- COMMAND'"))
		},
	}
	c.AddCommand(newPolicyCheckCmd())
	return c
}

func newPolicyCheckCmd() *cobra.Command {
	var host, mcpTool string
	var explain bool
	c := &cobra.Command{
		Use: "check [--config FILE] [--host HOST] [--listen ADDR] [--data-dir DIR] [--explain] -- COMMAND\n  opsbot policy check [--config FILE] --mcp SERVER/TOOL",
		Example: "  opsbot policy check -- 'df -h | sort -k5'\n  opsbot policy check --config /etc/opsbot/opsbot.yaml --host db-1 --explain -- 'sudo systemctl restart postgresql'" +
			"\n  opsbot policy check --config /etc/opsbot/opsbot.yaml --mcp grafana/delete_dashboard",
		Short: "Classify a command as the bot would: allow, approve or deny, with the reasons",
		Long: `Classify a command line as the bot would before running it on a host.

Prints the decision (allow, approve or deny) on the first line, then one
reason per line; --explain then lists every simple command found in the
parsed command line, wrappers and shell strings unwrapped.

Words after -- are joined with single spaces into the command line; quote
the command to keep its own quoting: opsbot policy check -- 'df -h | sort'.

With --mcp SERVER/TOOL it prints the decision on a tool of an MCP server of
mcp.servers instead, from the config alone (see 'opsbot mcp list').

Exit codes: 0 allow, 3 approve, 4 deny, 2 usage or configuration error.`,
		Args: args(func(cmd *cobra.Command, words []string) error {
			if mcpTool != "" {
				return cobra.NoArgs(cmd, words)
			}
			return cobra.MinimumNArgs(1)(cmd, words)
		}),
		RunE: func(cmd *cobra.Command, words []string) error {
			cfg, err := loadConfigFlag(cmd)
			if err != nil {
				return err
			}
			if mcpTool != "" {
				return mcpPolicyCheck(cmd.OutOrStdout(), cfg.MCP, mcpTool)
			}
			if err := cfg.applyPlaceFlags(cmd, os.Getenv); err != nil {
				return err
			}
			return policyCheck(cmd.OutOrStdout(), cfg, host, strings.Join(words, " "), explain)
		},
	}
	c.Flags().StringVar(&host, "host", hosts.LocalHost, "the host the command would run on (its groups select the config rules)")
	c.Flags().BoolVar(&explain, "explain", false, "also list the parsed commands and what each one got")
	c.Flags().StringVar(&mcpTool, "mcp", "", "SERVER/TOOL: the decision on a tool of an MCP server instead of a command")
	// The bot's listener and database are part of the policy (a known
	// destination, secret paths): judge with the places the bot runs with.
	c.Flags().String("listen", "", "the listener 'opsbot run' uses, host:port (default $OPSBOT_LISTEN, else web.listen)")
	c.Flags().String("data-dir", "", "the --data-dir 'opsbot run' uses, if any")
	return c
}

// policyCheck classifies command for host, prints the decision, and maps
// it to the exit code.
func policyCheck(w io.Writer, cfg *Config, host, command string, explain bool) error {
	pol, err := policy.NewPolicy(policyConfig(cfg))
	if err != nil {
		return usageError(err)
	}
	target, err := policyTarget(cfg, host)
	if err != nil {
		return usageError(err)
	}
	d := pol.Check(target, command)
	fmt.Fprintln(w, d.Action)
	for _, r := range d.Reasons {
		fmt.Fprintln(w, policy.RenderCommand(r, policy.DisplayOptions{}).Text)
	}
	if explain {
		fmt.Fprintf(w, "\nparsed commands (host %s, groups %v):\n", target.Host, target.Groups)
		for _, c := range d.Commands {
			fmt.Fprintln(w, "  "+policy.RenderCommand(c.String(), policy.DisplayOptions{}).Text)
		}
		fmt.Fprintf(w, "\nknown on loopback here: %s (any other local port needs approval; list a local service in policy.egress_allow as host:port)\n",
			orNone(pol.LoopbackServices(target)))
	}
	switch d.Action {
	case policy.Allow:
		return nil
	case policy.Approve:
		return &exitError{code: exitApprove, err: errors.New("approve"), silent: true}
	}
	return &exitError{code: exitDeny, err: errors.New("deny"), silent: true}
}

// policyConfig is the policy section as the bot applies it: opsbot's own
// config file, database (with its -wal and -shm files) and data directory
// are secret paths, and the inventory's hosts and addresses (an address
// on loopback with its SSH port only) and the web chat's listener are
// known destinations for network clients.
func policyConfig(cfg *Config) policy.PolicyConfig {
	pc := cfg.Policy
	var own []string
	addAbs := func(p, suffix string) {
		if abs, err := filepath.Abs(p); err == nil {
			own = append(own, escapeGlob(abs)+suffix)
		}
	}
	if cfg.file != "" {
		addAbs(cfg.file, "")
	}
	db := cfg.Store.WithDefaults().Path
	addAbs(db, "*")
	own = append(own, escapeGlob(filepath.Base(db))+"*") // read from the bot's own directory by a relative name
	addAbs(cfg.Bot.WithDefaults().DataDir, "")
	pc.OwnSecrets = append(slices.Clip(pc.OwnSecrets), own...)
	for _, h := range cfg.Hosts.Hosts {
		pc.KnownHosts = append(pc.KnownHosts, h.Name)
		if _, _, err := net.SplitHostPort(h.Address); err == nil {
			pc.KnownHosts = append(pc.KnownHosts, h.Address)
		} else if h.Address != "" {
			pc.KnownHosts = append(pc.KnownHosts, net.JoinHostPort(h.Address, "22"))
		}
	}
	pc.KnownServices = append(slices.Clip(pc.KnownServices), cfg.Web.WithDefaults().Listen)
	return pc
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}

// escapeGlob quotes the wildcard characters of a literal path.
func escapeGlob(p string) string {
	return strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`).Replace(p)
}

// policyTarget finds the host and its groups in the inventory.
func policyTarget(cfg *Config, host string) (policy.Target, error) {
	if host == hosts.LocalHost {
		return policy.Target{Host: host}, nil
	}
	for _, h := range cfg.Hosts.Hosts {
		if h.Name == host {
			return policy.Target{Host: h.Name, Groups: h.Groups}, nil
		}
	}
	return policy.Target{}, fmt.Errorf("policy check: no host %q in the inventory (hosts: in the config file; %q is built in)", host, hosts.LocalHost)
}
