package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/store"
)

// Sweeper ends what a crashed opsbot left running of a command
// (hosts.Fleet does), from the record executor.ProcessLedger kept.
type Sweeper interface {
	End(ctx context.Context, p hosts.Process) (ended bool, err error)
}

// orphans ends, before anything new starts, every command a previous
// process recorded as running and did not see end (it was killed), and
// tells each command's thread that it was cut off. Commands of a process
// that still runs are left alone.
type orphans struct {
	store   orphanStore
	sweeper Sweeper
	out     replier
	log     *slog.Logger
}

// orphanStore is the record of running commands the sweep reads and
// clears.
type orphanStore interface {
	RunningCommands(ctx context.Context) ([]store.RunningCommand, error)
	RemoveRunning(ctx context.Context, id int64) error
}

var _ orphanStore = (*store.Jobs)(nil)

// end ends the orphans and tells their threads.
func (o *orphans) end(ctx context.Context) {
	left, err := o.store.RunningCommands(ctx)
	if err != nil {
		o.log.Error("find commands a crash left running", "err", err)
		return
	}
	var wg sync.WaitGroup
	for _, c := range left {
		if hosts.Alive(hosts.Process{PID: c.OwnerPID, Start: c.OwnerStart, Boot: c.OwnerBoot}) {
			continue // another opsbot's, still running
		}
		// Hosts are swept side by side: a dead SSH host costs its
		// timeout once, not once per command.
		wg.Go(func() {
			p := hosts.Process{Host: c.Host, PID: c.PID, Start: c.Start, Boot: c.Boot, Token: c.Token, Command: c.Command}
			ended, err := o.sweeper.End(ctx, p)
			if err != nil {
				o.log.Warn("command cut off by a restart; whether it still runs could not be checked", "host", c.Host, "err", err)
			} else {
				o.log.Warn("command cut off by a restart", "host", c.Host, "ended_now", ended)
			}
			o.tell(ctx, c, ended, err)
			if err := o.store.RemoveRunning(ctx, c.ID); err != nil {
				o.log.Error("forget a swept command", "err", err)
			}
		})
	}
	wg.Wait()
}

// tell says in the command's thread what became of it.
func (o *orphans) tell(ctx context.Context, c store.RunningCommand, ended bool, err error) {
	id, ok := parseThreadID(c.Label)
	if !ok {
		return // not started from a thread
	}
	o.out.reply(ctx, connectors.Event{Platform: id.platform, Channel: id.channel, Thread: id.thread}, cutOffText(c, ended, err))
}

// cutOffText is what a thread reads about a command a restart cut off.
func cutOffText(c store.RunningCommand, ended bool, err error) string {
	what := fmt.Sprintf("`%s` on %s", oneLine(c.Command), c.Host)
	switch {
	case err != nil:
		return fmt.Sprintf("⏹ Cut off: %s was running when opsbot stopped. Whether it still runs could not be checked (%s); "+
			"if it does, it ends at its own time limit. It was not re-run.", what, plainSweepError(err))
	case ended:
		return fmt.Sprintf("⏹ Cut off: %s was still running when opsbot restarted; it has been stopped, and was not re-run.", what)
	}
	return fmt.Sprintf("⏹ Cut off: %s was running when opsbot stopped; it had ended by the restart, and its result was not seen. "+
		"It was not re-run.", what)
}

// plainSweepError is the reason a sweep failed, in a person's words.
func plainSweepError(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "the host did not answer in time"
	}
	return "the host could not be reached"
}
