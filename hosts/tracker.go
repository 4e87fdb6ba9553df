package hosts

import (
	"context"
	"errors"
)

// Process is a command that is running, as a start-up sweep needs it to
// end the command after opsbot itself was killed: a `kill -9` of the bot
// leaves its commands running, each in a process group of its own.
type Process struct {
	// Host is the inventory name ("local" for the bot's own host).
	Host string
	// PID is the command's process group: the group leader's pid.
	PID int
	// Start is the local leader's start time in clock ticks after boot
	// and Boot the kernel's boot id then: together with PID they name one
	// process, so a pid reused since is never taken for it.
	Start uint64
	Boot  string
	// Token names a remote run: it is in the command line of the run's
	// group leader (timeout … bash -c COMMAND opsbot-run-TOKEN), which is
	// how a reused remote pid is told from the command's.
	Token   string
	Command string
	// Label says who started the command (WithLabel), so the sweep can
	// tell them it was cut off.
	Label string
	// Approval is the approval the run claimed (Options.Approval), or "".
	Approval string
}

// Tracker records the commands that are running, so that what a crashed
// process left behind can be found and ended (EndLocal, Pool.End).
// Started is called once the command's process group is known; done when
// the command has ended.
//
// An error from Started means the command must not run: a remote one is
// not started, a local one (whose process group had to exist to be
// recorded) is killed at once. A Tracker that merely failed to record
// returns nil, nil, and the command runs as it did before there was a
// record.
type Tracker interface {
	Started(ctx context.Context, p Process) (done func(), err error)
}

// StartGate is a Tracker that must agree before a local command starts:
// a local command is recorded only once its process exists, so what its
// record depends on (the approval it claimed, copied off the machine in
// ha) is made safe first, and a command that cannot be is never started.
type StartGate interface {
	BeforeStart(ctx context.Context) error
}

// ErrUnrecorded is what a Tracker wraps when a command's record could
// not be kept where a successor would find it (ha: copied off the
// machine), so the command must not run: a successor that took over
// would not know it ran.
var ErrUnrecorded = errors.New("opsbot could not copy its record of the command to its replica, and another opsbot taking over would not have known it ran")

type labelKey struct{}

// WithLabel marks the commands run under ctx as started by label (the
// bot's thread), for Process.Label.
func WithLabel(ctx context.Context, label string) context.Context {
	return context.WithValue(ctx, labelKey{}, label)
}

// LabelOf is the label WithLabel put on ctx, or "".
func LabelOf(ctx context.Context) string {
	s, _ := ctx.Value(labelKey{}).(string)
	return s
}

// track calls t.Started when t is set; the returned func is never nil.
// An error means the command must not run (Tracker).
func track(ctx context.Context, t Tracker, p Process, approval string) (func(), error) {
	if t == nil {
		return func() {}, nil
	}
	p.Label, p.Approval = LabelOf(ctx), approval
	// The record must outlive a cancelled command: its end is recorded
	// by done, whatever ctx says.
	done, err := t.Started(context.WithoutCancel(ctx), p)
	if done == nil {
		done = func() {}
	}
	return done, err
}
