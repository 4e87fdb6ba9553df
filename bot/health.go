package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/opsbot/opsbot/checks"
	"github.com/opsbot/opsbot/connectors"
)

// Health is what the `health` command needs of the scheduled checks;
// *checks.Scheduler is one.
type Health interface {
	Names() []string
	Schedule(name string) (checks.Schedule, bool)
	Next(name string) time.Time
	Latest(ctx context.Context, name string) (checks.Report, error)
	RunNow(ctx context.Context, name string) (checks.Report, error)
}

var _ Health = (*checks.Scheduler)(nil)

// noSchedules answers `health` when the config schedules no checks.
const noSchedules = "No health checks are scheduled: add `checks` and `schedules` to the config (see deploy/opsbot.example.yaml) and restart."

// health answers `health` (the schedules and their last results) and
// `health NAME` (run that schedule now, its report into this thread).
func (c *commands) health(ctx context.Context, ev connectors.Event, name string) {
	if c.checks == nil || len(c.checks.Names()) == 0 {
		c.out.reply(ctx, ev, noSchedules)
		return
	}
	if name == "" {
		c.out.reply(ctx, ev, c.healthList(ctx))
		return
	}
	if _, ok := c.checks.Schedule(name); !ok {
		c.out.reply(ctx, ev, fmt.Sprintf("There is no schedule %q. Schedules: %s.", name, quoted(c.checks.Names())))
		return
	}
	rep, err := c.checks.RunNow(ctx, name)
	if err != nil {
		internalError(ctx, c.out, c.log, ev, err)
		return
	}
	limit := maxText(c.out, ev)
	for _, m := range append([]connectors.Message{rep.Summary(limit)}, rep.Details(limit)...) {
		if _, err := c.out.post(ctx, destOf(ev), m); err != nil {
			c.log.Warn("post health report", "channel", ev.Channel, "err", err)
			return
		}
	}
}

// healthList is one line per schedule: its cron, its next run and its
// last result.
func (c *commands) healthList(ctx context.Context) string {
	lines := []string{"Health-check schedules (`health NAME` runs one now):"}
	for _, name := range c.checks.Names() {
		sc, _ := c.checks.Schedule(name)
		line := fmt.Sprintf("• `%s` — `%s`, checks %s", name, sc.Cron, strings.Join(sc.Checks, ", "))
		if next := c.checks.Next(name); !next.IsZero() {
			line += ", next " + next.Format("2006-01-02 15:04 MST")
		}
		rep, err := c.checks.Latest(ctx, name)
		switch {
		case errors.Is(err, checks.ErrNoRuns):
			line += "\n   not run yet"
		case err != nil:
			c.log.Error("health: read the last run", "schedule", name, "err", err)
			line += "\n   its last run could not be read (see the bot's log)"
		default:
			line += "\n   last run " + rep.At.In(zone(rep)).Format("2006-01-02 15:04 MST") + ": " + rep.SummaryLine()
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

func zone(rep checks.Report) *time.Location {
	if rep.Zone == nil {
		return time.Local
	}
	return rep.Zone
}

func quoted(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "`" + n + "`"
	}
	return strings.Join(out, ", ")
}
