package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

func newStatsCmd() *cobra.Command {
	c := addDataDirFlag(&cobra.Command{
		Use:   "stats",
		Short: "The bot's use per day: answers, approvals, commands, tokens and feedback",
		Long: `Print, per UTC day since --since (default 30d), what the bot did. Days without use
are left out. The columns:

  answers     questions answered: chat turns that ended with an answer, one per question
              however many steps and texts the model took on the way (a turn stopped,
              failed or cut off by a restart is not one; alert investigations and the
              turns opsbot starts itself, e.g. to tell the model a plan's results, are
              not counted), on the day the turn ended
  approvals   approval requests approved, on the day of the decision
  commands    commands that ran, by people or the model (the audit trail's command.end
              rows; the scheduler's health checks are not counted)
  tokens in   model tokens sent (every prompt token, the cached ones included)
  cached      of those, the tokens read from the provider's prompt cache
  tokens out  model tokens written
              (tokens: every model call of a thread's turns, summarize and postmortem)
  feedback    the good and bad votes people gave answers

Reads the database of --data-dir or store.path only: safe while 'opsbot run' runs.`,
		Example: "  opsbot stats\n  opsbot stats --since 7d --data-dir /var/lib/opsbot\n  opsbot stats --since 2026-11-01 --config /etc/opsbot/opsbot.yaml",
		Args:    args(cobra.NoArgs),
		RunE:    runStats,
	})
	c.Flags().String("since", "30d", "the first day: a duration back from now (7d, 24h) or a date (2026-11-01)")
	return c
}

// runStats prints the table.
func runStats(cmd *cobra.Command, _ []string) error {
	s, _ := cmd.Flags().GetString("since")
	since, err := parseWhen("since", s, time.Now())
	if err != nil {
		return err
	}
	st, _, err := openReadStore(cmd)
	if err != nil {
		return err
	}
	defer st.Close()
	days, err := st.Memory().DailyStats(cmd.Context(), since.UTC())
	if err != nil {
		return err
	}
	if len(days) == 0 {
		fmt.Fprintf(cmd.OutOrStdout(), "No use on record since %s.\n", since.UTC().Format("2006-01-02"))
		return nil
	}
	fb, err := st.FeedbackByDay(cmd.Context(), since.UTC())
	if err != nil {
		return err
	}
	feedback := make(map[string]string, len(fb))
	for _, f := range fb {
		feedback[f.Day] = fmt.Sprintf("%d good, %d bad", f.Good, f.Bad)
	}
	w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "day\tanswers\tapprovals\tcommands\ttokens in\tcached\ttokens out\tfeedback\t")
	for _, d := range days {
		f, ok := feedback[d.Day]
		if !ok {
			f = "-"
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t\n", d.Day, d.Answers, d.Approvals, d.Commands,
			d.Tokens.Input, d.Tokens.Cached, d.Tokens.Output, f)
	}
	return w.Flush()
}
