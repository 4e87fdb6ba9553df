package checks

import (
	"context"
	"errors"
	"time"
)

// RunStore keeps the runs of the schedules; the store's Checks sub-store
// is one. SaveCheckRun commits a run with all its results in one
// transaction and returns it with its id.
type RunStore interface {
	SaveCheckRun(ctx context.Context, run CheckRun) (CheckRun, error)
	RunHistory
	LastCheckRunStart(ctx context.Context, schedule string) (time.Time, error)
}

// RunHistory reads a schedule's last runs, newest first.
type RunHistory interface {
	LastCheckRuns(ctx context.Context, schedule string, limit int) ([]CheckRun, error)
}

// PostStore keeps the message each schedule keeps in a channel for a day;
// the store's Checks sub-store is one.
type PostStore interface {
	// CheckPostFor returns the schedule's message of day in a channel, or
	// an error that is ErrNoPost when none was posted yet.
	CheckPostFor(ctx context.Context, schedule, platform, channel, day string) (CheckPost, error)
	RecordCheckPost(ctx context.Context, p CheckPost) error
}

// ErrNoPost is (wrapped in) the error of PostStore.CheckPostFor for a day
// with no message yet.
var ErrNoPost = errors.New("checks: nothing posted yet")

// CheckRun is one run of a scheduled health check, across its hosts.
type CheckRun struct {
	ID        int64
	Schedule  string
	StartedAt time.Time
	EndedAt   time.Time
	Results   []CheckResult
}

// CheckResult is one check on one host.
type CheckResult struct {
	Host  string
	Check string
	// OK is Status == "ok" (kept for rows written before statuses).
	OK bool
	// Status is the judgement: ok, warn, fail or unreachable.
	Status string
	// Value is the number read from the output, when HasValue.
	Value    float64
	HasValue bool
	// Output is an excerpt of what the command printed.
	Output string
	// Detail says why the status, e.g. "exit 2" or "no number in the output".
	Detail string
	// Since is when the host's check entered Status (this run's start
	// when it changed).
	Since    time.Time
	Duration time.Duration
}

// CheckPost is the message a schedule keeps in one channel for one day:
// edited to the latest summary, each run's details in its thread.
type CheckPost struct {
	Schedule  string
	Platform  string
	Channel   string
	Day       string // YYYY-MM-DD in the schedule's zone
	MessageID string
	Thread    string
	UpdatedAt time.Time
}
