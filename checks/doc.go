// Package checks runs scheduled health checks: it defines checks and
// schedules (config), runs each schedule on its cron through hosts, judges
// every host's result (ok, warn, fail, unreachable), remembers the run in
// the store, says what changed since the previous run, and builds the
// report as one neutral connectors.Message, kept in one message per
// schedule, channel and day with each run's details in its thread. A new
// failure or a recovery is also announced in a new message that notifies
// (a thread reply shown in the channel, or a channel message, opening
// with the schedule's mentions): no platform notifies of an edit.
//
// A check's command must be one the policy allows without approval on
// every target host: a scheduled run never waits for a click.
package checks
