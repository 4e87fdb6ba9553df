package tools

import (
	"fmt"
	"time"

	"github.com/opsbot/opsbot/hosts"
)

// JobEndPrompt is the message of the short turn a finished job starts in
// its thread (agent.on_job_end: turn): the job's outcome and the head and
// tail of its output, labelled as opsbot's, so the model answers what the
// job's end means rather than taking it for the person's words.
func JobEndPrompt(j hosts.Job) string {
	return "[opsbot note, not the person's words] A background job in this conversation ended. Tell the thread in a few " +
		"sentences what it means: what finished, what failed or was skipped (quote the output), and what, if anything, " +
		"to do next. Do not start it again unless asked.\n<job>\n" + unframe(FormatJob(j)) + "\n</job>"
}

// FormatJob renders a job for the model or a person.
func FormatJob(j hosts.Job) string {
	s := fmt.Sprintf("job %d: `%s` on %s — %s", j.ID, j.Command, j.Host, j.State)
	if j.ExitCode != nil {
		s += fmt.Sprintf(", exit %d", *j.ExitCode)
	}
	if !j.EndedAt.IsZero() {
		s += fmt.Sprintf(", took %s", j.EndedAt.Sub(j.StartedAt).Round(time.Millisecond))
	}
	if j.OutputTail != "" {
		s += "\n" + j.OutputTail
	}
	return s
}
