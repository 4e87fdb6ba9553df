package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/opsbot/opsbot/store"
)

func newSessionsCmd() *cobra.Command {
	c := &cobra.Command{
		Use:     "sessions",
		Short:   "List the bot's conversations (one per thread)",
		Example: "  opsbot sessions list --limit 20",
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError(errors.New("say what to do: 'opsbot sessions list'"))
		},
	}
	list := addDataDirFlag(&cobra.Command{
		Use:   "list",
		Short: "List the sessions, the latest active first: where, who started it, last activity, state",
		Long: `List the bot's sessions (a session is one thread's conversation), the latest active
first: its platform, its channel and thread (a Slack or Discord thread as the time
it began), who started it (as far as the database tells: the web chat's first
author, else the first person who asked for a command there; an alert's thread
as "alert: " and the alert group's title), when it was last active, and its
state: answering, waiting for approval, or idle with how its last answer ended
(an alert's investigation counts as its thread's answer).

Reads the database of --data-dir or store.path only: safe while 'opsbot run' runs.`,
		Example: "  opsbot sessions list\n  opsbot sessions list --limit 0 --data-dir /var/lib/opsbot",
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			limit, _ := cmd.Flags().GetInt("limit")
			if limit < 0 {
				return usageError(fmt.Errorf("--limit %d: give a number of sessions, or 0 for all", limit))
			}
			st, _, err := openReadStore(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			return listSessions(cmd.Context(), cmd.OutOrStdout(), st, limit, time.Now())
		},
	})
	list.Flags().Int("limit", 50, "how many sessions to list (0: all)")
	c.AddCommand(list)
	return c
}

// listSessions prints the sessions as a table.
func listSessions(ctx context.Context, w io.Writer, st *store.Store, limit int, now time.Time) error {
	list, err := st.Sessions().ListSessions(ctx, limit)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		fmt.Fprintln(w, "No sessions yet.")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LAST ACTIVITY\tPLATFORM\tWHERE\tSTARTED BY\tSTATE")
	for _, s := range list {
		fmt.Fprintf(tw, "%s (%s)\t%s\t%s\t%s\t%s\n", s.LastActivity.Local().Format("2006-01-02 15:04"), untilText(s.LastActivity, now),
			s.Platform, sessionPlace(s.Platform, s.Channel, s.Thread), sessionStarter(s), sessionState(s))
	}
	return tw.Flush()
}

// sessionState says in words where a session stands.
func sessionState(s store.SessionSummary) string {
	switch {
	case s.Pending == 1:
		return "waiting for approval"
	case s.Pending > 1:
		return fmt.Sprintf("waiting for %d approvals", s.Pending)
	}
	switch s.LastTurn {
	case store.TurnRunning:
		return "answering"
	case store.TurnDone:
		if s.LastTurnEnded.IsZero() {
			return "answered"
		}
		return "answered " + s.LastTurnEnded.Local().Format("2006-01-02 15:04")
	case "":
		if s.Alert != "" {
			return "not investigated"
		}
		return "no answer yet"
	case store.TurnInterrupted:
		return "last answer cut by a restart"
	}
	return "last answer " + string(s.LastTurn)
}

// sessionStarter is who started a session: for an alert's thread, the
// alert group (its investigation asked, not a person).
func sessionStarter(s store.SessionSummary) string {
	if s.Alert != "" {
		return "alert: " + strings.Join(strings.Fields(s.Alert), " ")
	}
	return personText(s.StartedBy)
}

// sessionPlace is a session's channel and thread as a person reads them:
// a Slack or Discord thread by the time it began (its id encodes it).
func sessionPlace(platform, channel, thread string) string {
	if thread == "" || thread == channel {
		return channel
	}
	if t, ok := threadTime(platform, thread); ok {
		return channel + ", thread of " + t.Local().Format("2006-01-02 15:04")
	}
	return channel + ", thread " + thread
}

// discordEpoch is the start of Discord's snowflake clock, in Unix ms.
const discordEpoch = 1420070400000

// threadTime reads the time a thread began from its id where the platform
// encodes it: Slack's ts (Unix seconds), Discord's snowflake.
func threadTime(platform, thread string) (time.Time, bool) {
	switch platform {
	case "slack":
		secs, _, _ := strings.Cut(thread, ".")
		n, err := strconv.ParseInt(secs, 10, 64)
		return time.Unix(n, 0), err == nil && n > 0
	case "discord":
		n, err := strconv.ParseUint(thread, 10, 64)
		return time.UnixMilli(int64(n>>22) + discordEpoch), err == nil && n>>22 > 0
	}
	return time.Time{}, false
}
