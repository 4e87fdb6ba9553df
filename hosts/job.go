package hosts

import "time"

// JobState is where a background job stands.
type JobState string

// The job states; every state but running is final.
const (
	JobRunning     JobState = "running"
	JobSucceeded   JobState = "succeeded"
	JobFailed      JobState = "failed"
	JobCancelled   JobState = "cancelled"
	JobInterrupted JobState = "interrupted" // found running at start-up: never re-run
)

// Job is a long command run in the background.
type Job struct {
	ID         int64
	SessionID  int64 // 0 when started outside a session
	Host       string
	Command    string
	Requester  string
	State      JobState
	ExitCode   *int // nil until it ended with a code
	OutputTail string
	StartedAt  time.Time
	EndedAt    time.Time
}
