package approvals

import "errors"

// StoppedBy is the cancel cause of work a person stopped: a request that
// work waits on is withdrawn, denied in that person's name when they may
// deny it (GateApprover).
type StoppedBy struct {
	Person Person
	// Name is how the person is shown: "stopped by @Name".
	Name string
}

func (s StoppedBy) Error() string { return "stopped by @" + s.Name }

// ErrShutdown is the cancel cause (or one of them, errors.Is) of work
// stopped because the process is shutting down: a request that work waits
// on stays pending, and its follow-up open, for after the restart.
var ErrShutdown = errors.New("approvals: opsbot is shutting down")
