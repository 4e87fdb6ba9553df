package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/store"
)

func newApprovalsCmd() *cobra.Command {
	c := &cobra.Command{
		Use:     "approvals",
		Short:   "List the approval requests waiting for a decision",
		Example: "  opsbot approvals list --config /etc/opsbot/opsbot.yaml",
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError(errors.New("say what to do: 'opsbot approvals list'"))
		},
	}
	c.AddCommand(addDataDirFlag(&cobra.Command{
		Use:   "list",
		Short: "List the pending approval requests: command, host, who asked, who may approve, votes, expiry",
		Long: `List every approval request still waiting for a decision, oldest first: its short
reference, the command and its host, who asked and where, who may approve it (the
approvers of the config in force for its channel and host), the votes so far, and
when it expires. Approve or deny it where its card was posted.

Reads the database of --data-dir or store.path only: safe while 'opsbot run' runs.`,
		Example: "  opsbot approvals list --config /etc/opsbot/opsbot.yaml\n  opsbot approvals list --data-dir /var/lib/opsbot",
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, cfg, err := openReadStore(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			return listApprovals(cmd.Context(), cmd.OutOrStdout(), st, cfg, time.Now())
		},
	}))
	return c
}

// listApprovals prints one block per pending request.
func listApprovals(ctx context.Context, w io.Writer, st *store.Store, cfg *Config, now time.Time) error {
	gate, err := readGate(st, cfg)
	if err != nil {
		return err
	}
	pending, err := gate.Pending(ctx)
	if err != nil {
		return err
	}
	if len(pending) == 0 {
		fmt.Fprintln(w, "No approval request is waiting.")
		return nil
	}
	for i, a := range pending {
		votes, err := st.Approvals().Votes(ctx, a.ID)
		if err != nil {
			return err
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		who := gate.WhoMayApprove(a)
		if a.Platform == "console" {
			// The terminal's own person approves there (consoleGateConfig),
			// a rule the config does not hold.
			who = "the person at the terminal where it was asked (y/N)"
		}
		printApproval(w, a, votes, who, now)
	}
	return nil
}

// readGate is the gate of the config's approvers over st, as 'opsbot run'
// builds it, for who may approve; it decides nothing here.
func readGate(st *store.Store, cfg *Config) (*approvals.Gate, error) {
	inv, err := hosts.NewInventory(cfg.Hosts)
	if err != nil {
		return nil, usageError(err)
	}
	groups := func(host string) []string {
		h, _ := inv.Lookup(host)
		return h.Groups
	}
	gateCfg, _ := webGateConfig(cfg)
	return approvals.NewGate(st.Approvals(), gateCfg, approvals.GateOptions{HostGroups: groups}), nil
}

// printApproval writes one request as a short block.
func printApproval(w io.Writer, a approvals.Approval, votes []approvals.Vote, who string, now time.Time) {
	fmt.Fprintf(w, "%s  %s: %s\n", shortRef(a.ID), a.Host, approvals.Shown(a.Command))
	if a.Cwd != "" {
		fmt.Fprintf(w, "  in directory %s\n", a.Cwd)
	}
	fmt.Fprintf(w, "  asked by %s%s\n", personText(a.Requester), placeText(a.Platform, a.Channel))
	fmt.Fprintf(w, "  may approve: %s\n", connectors.PlainMentions(who))
	fmt.Fprintf(w, "  votes: %s\n", votesText(votes, a.Quorum))
	fmt.Fprintf(w, "  expires %s (%s)\n", untilText(a.ExpiresAt, now), a.ExpiresAt.Local().Format("2006-01-02 15:04 MST"))
}

// shortRef is the first 8 characters of a request's id: enough for a
// person to tell requests apart and find one in the audit trail.
func shortRef(id string) string { return id[:min(8, len(id))] }

// placeText says where a request was asked: " on slack in C123".
func placeText(platform, channel string) string {
	switch {
	case platform == "":
		return ""
	case channel == "":
		return " on " + platform
	}
	return " on " + platform + " in " + channel
}

// votesText is the votes so far against the quorum.
func votesText(votes []approvals.Vote, quorum int) string {
	var yes, no []string
	for _, v := range votes {
		if v.Vote == "deny" {
			no = append(no, personText(v.Voter))
		} else {
			yes = append(yes, personText(v.Voter))
		}
	}
	s := fmt.Sprintf("%d of %d approvals", len(yes), quorum)
	if len(yes) > 0 {
		s += " (" + strings.Join(yes, ", ") + ")"
	}
	if len(no) > 0 {
		s += "; denied by " + strings.Join(no, ", ")
	}
	return s
}
