package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/opsbot/opsbot/checks"
	"github.com/opsbot/opsbot/hosts/executor"
)

// newScheduler builds the health-check scheduler over the shared parts:
// the same fleet and policy as every other command. posters finds where
// reports go (nil for the CLI, which prints them); m may be nil.
func (rt *parts) newScheduler(posters checks.Posters, m *checks.Metrics) (*checks.Scheduler, *checks.Publisher, error) {
	pol := checks.PolicyOf(rt.policy)
	run := executor.AuditedRunner{Runner: rt.fence.runner(rt.fleet), Policy: rt.policyChecker(), Audit: executorStore{st: rt.store}, Redactor: rt.red, Actor: "scheduler", Log: rt.log}
	r := &checks.Runner{Hosts: run, Resolver: rt.fleet.Inventory, Policy: pol, Store: rt.store.Checks(), Metrics: m}
	if posters == nil {
		posters = func(string) (checks.Poster, bool) { return nil, false }
	}
	p := &checks.Publisher{Store: rt.store.Checks(), Posters: posters}
	s, err := checks.NewScheduler(rt.cfg.Checks, r, p, rt.log)
	return s, p, err
}

func newHealthCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "health",
		Short: "List the scheduled health checks, or run them now",
		Example: `  opsbot health list --config /etc/opsbot/opsbot.yaml
  opsbot health run morning --config /etc/opsbot/opsbot.yaml`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError(errors.New("say what to do: 'opsbot health list' or 'opsbot health run [NAME]'"))
		},
	}
	c.PersistentFlags().String("data-dir", "", "folder of the database, as 'opsbot run --data-dir' (default: store.path)")
	c.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List the schedules of the config, each with its next run and last result",
		Long: `List each schedule of the config's 'schedules' section: its cron, its checks, when it
runs next and the summary of its last run, read from the database. Safe while the
bot runs: it only reads.`,
		Example: `  opsbot health list --config /etc/opsbot/opsbot.yaml
  opsbot health list --config opsbot.yaml --data-dir /var/lib/opsbot`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withScheduler(cmd, func(ctx context.Context, s *checks.Scheduler) error {
				return listHealth(ctx, cmd.OutOrStdout(), s, time.Now())
			})
		},
	})
	c.AddCommand(&cobra.Command{
		Use:   "run [NAME]",
		Short: "Run a schedule's checks now (all schedules without NAME) and print the report; exit 1 if any failed",
		Long: `Run the checks of schedule NAME (of every schedule when NAME is left out) on their
hosts now, record the run in the database as a scheduled run would, and print the
report as plain text. Nothing is posted to chat, so no Slack or Discord token
(nor a model's key) is needed. Exit 0 when every check passed (warnings pass),
1 when one failed or a host was unreachable, 2 for an unknown schedule.
Safe while the bot runs: the bot's next report compares against this run.`,
		Example: `  # every schedule of the config, now
  opsbot health run --config /etc/opsbot/opsbot.yaml
  # one schedule, from a cron job or CI: exit 1 when a check fails
  opsbot health run morning --config /etc/opsbot/opsbot.yaml || echo "morning: a check failed"`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, names []string) error {
			return withScheduler(cmd, func(ctx context.Context, s *checks.Scheduler) error {
				return runHealth(ctx, cmd.OutOrStdout(), s, names)
			})
		},
	})
	return c
}

// withScheduler builds the parts and a scheduler that is never started:
// the CLI runs schedules itself.
func withScheduler(cmd *cobra.Command, fn func(context.Context, *checks.Scheduler) error) error {
	cfg, err := loadHealthConfig(cmd)
	if err != nil {
		return err
	}
	if len(cfg.Checks.Schedules) == 0 {
		return usageError(errors.New("the config has no schedules: add checks and schedules to it (see deploy/opsbot.example.yaml) and pass it with --config"))
	}
	log, err := cfg.terminalLogger(cmd)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	rt, err := build(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer rt.Close()
	s, _, err := rt.newScheduler(nil, nil)
	if err != nil {
		return err
	}
	return fn(ctx, s)
}

// listHealth prints one block per schedule.
func listHealth(ctx context.Context, w io.Writer, s *checks.Scheduler, now time.Time) error {
	for _, name := range s.Names() {
		sc, _ := s.Schedule(name)
		fmt.Fprintf(w, "%s\t%s\tchecks: %s", name, sc.Cron, strings.Join(sc.Checks, ", "))
		if spec, err := checks.ParseCron(sc.Cron); err == nil {
			fmt.Fprintf(w, "\tnext: %s", spec.Next(now).Format("2006-01-02 15:04 MST"))
		}
		fmt.Fprintln(w)
		rep, err := s.Latest(ctx, name)
		switch {
		case errors.Is(err, checks.ErrNoRuns):
			fmt.Fprintln(w, "  not run yet")
		case err != nil:
			return err
		default:
			fmt.Fprintf(w, "  last run %s: %s\n", rep.At.Local().Format("2006-01-02 15:04 MST"), plainText(rep.SummaryLine()))
		}
	}
	return nil
}

// reportWidth is how much text a printed report holds before its
// sections are split (a terminal has no platform limit).
const reportWidth = 1 << 20

// runHealth runs the named schedules (all without names), prints each
// report, and fails with exit 1 when one has a failure.
func runHealth(ctx context.Context, w io.Writer, s *checks.Scheduler, names []string) error {
	if len(names) == 0 {
		names = s.Names()
	}
	for _, n := range names {
		if _, ok := s.Schedule(n); !ok {
			return usageError(fmt.Errorf("there is no schedule %q: the schedules are %s", n, strings.Join(s.Names(), ", ")))
		}
	}
	var failing []string
	for i, n := range names {
		rep, err := s.RunNow(ctx, n)
		if err != nil {
			return err
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		printReport(w, rep)
		if rep.Failing() {
			failing = append(failing, n)
		}
	}
	if len(failing) > 0 {
		return &exitError{code: exitFailure, err: fmt.Errorf("a check failed in %s", strings.Join(failing, ", ")), silent: true}
	}
	return nil
}

// printReport writes the report as plain text: its summary, then its
// details.
func printReport(w io.Writer, rep checks.Report) {
	sum := rep.Summary(reportWidth)
	fmt.Fprintln(w, plainText(firstLine(sum.Text)))
	fmt.Fprintln(w, sum.Context)
	for _, m := range rep.Details(reportWidth) {
		fmt.Fprintln(w)
		fmt.Fprintln(w, plainText(m.Text))
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// plainText is a report's markdown as a terminal shows it best: a fenced
// block's lines indented without their fences, **bold** plain, and a
// `code` span as its text in quotes.
func plainText(s string) string {
	lines := strings.Split(s, "\n")
	out := lines[:0]
	inFence := false
	for _, l := range lines {
		switch {
		case strings.HasPrefix(strings.TrimSpace(l), "```"):
			inFence = !inFence
			continue
		case inFence:
			l = "  " + l
		default:
			l = codeSpan.ReplaceAllString(strings.ReplaceAll(l, "**", ""), "'$1'")
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// codeSpan is an inline `code` span of a report line.
var codeSpan = regexp.MustCompile("`([^`\n]*)`")
