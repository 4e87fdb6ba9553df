package approvals

import "time"

// StepStatus is where one step of a running plan stands.
type StepStatus string

// The step statuses, in the words a plan's progress block shows.
const (
	StepPending    StepStatus = "pending"
	StepInProgress StepStatus = "in_progress"
	StepComplete   StepStatus = "complete"
	StepError      StepStatus = "error"
	// StepCut is a step a restart cut off after it started: it is not run
	// again.
	StepCut StepStatus = "cut"
)

// StepProgress is one step as people watch it run.
type StepProgress struct {
	Target   string
	Command  string
	Status   StepStatus
	ExitCode int
	Duration time.Duration
	// Output is a short summary of what the step printed.
	Output string
	// Verify is the step's verify command, run after the step succeeded
	// ("" when it has none); VerifyStatus, VerifyExit and VerifyOutput
	// say how it went (pending until it runs).
	Verify       string
	VerifyStatus StepStatus
	VerifyExit   int
	VerifyOutput string
}

// PlanProgress is a plan's progress, a plain value any connector can
// render (the Slack plan block, the web chat's text).
type PlanProgress struct {
	Goal  string
	Steps []StepProgress
}

// Ran is the number of the steps that started, finished or not.
func (p PlanProgress) Ran() int {
	n := 0
	for _, s := range p.Steps {
		if s.Status != StepPending {
			n++
		}
	}
	return n
}
