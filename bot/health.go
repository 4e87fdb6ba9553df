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
func (b *Bot) health(ctx context.Context, ev connectors.Event, name string) {
	if b.Health == nil || len(b.Health.Names()) == 0 {
		b.reply(ctx, ev, noSchedules)
		return
	}
	if name == "" {
		b.reply(ctx, ev, b.healthList(ctx))
		return
	}
	if _, ok := b.Health.Schedule(name); !ok {
		b.reply(ctx, ev, fmt.Sprintf("There is no schedule %q. Schedules: %s.", name, quoted(b.Health.Names())))
		return
	}
	rep, err := b.Health.RunNow(ctx, name)
	if err != nil {
		b.internalError(ctx, ev, err)
		return
	}
	c, ok := b.conn(ev.Platform)
	if !ok {
		return
	}
	max := c.Limits().MaxText
	if max <= 0 {
		max = 2000
	}
	for _, m := range append([]connectors.Message{rep.Summary(max)}, rep.Details(max)...) {
		if _, err := b.post(ctx, destOf(ev), m); err != nil {
			b.log().Warn("post health report", "channel", ev.Channel, "err", err)
			return
		}
	}
}

// healthList is one line per schedule: its cron, its next run and its
// last result.
func (b *Bot) healthList(ctx context.Context) string {
	lines := []string{"Health-check schedules (`health NAME` runs one now):"}
	for _, name := range b.Health.Names() {
		sc, _ := b.Health.Schedule(name)
		line := fmt.Sprintf("• `%s` — `%s`, checks %s", name, sc.Cron, strings.Join(sc.Checks, ", "))
		if next := b.Health.Next(name); !next.IsZero() {
			line += ", next " + next.Format("2006-01-02 15:04 MST")
		}
		rep, err := b.Health.Latest(ctx, name)
		switch {
		case errors.Is(err, checks.ErrNoRuns):
			line += "\n   not run yet"
		case err != nil:
			b.log().Error("health: read the last run", "schedule", name, "err", err)
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

// ReportPoster is how scheduled reports reach a platform: through the
// bot's connector for it. It is a checks.Posters.
func (b *Bot) ReportPoster(platform string) (checks.Poster, bool) {
	c, ok := b.conn(platform)
	if !ok {
		return nil, false
	}
	return c, true
}

var _ checks.Posters = (*Bot)(nil).ReportPoster
