package bot

import (
	"fmt"
	"strings"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/store"
)

// noteRef is the reference of opsbot's own note that began a turn (a
// plan's results, a job's end): it is in the thread's record, and was
// posted nowhere.
const noteRef = "opsbot's note to the model, not posted in the thread"

// isNote says whether a message of the record is opsbot's own note that
// began a turn, not a person's words.
func isNote(d store.MemoryHit) bool {
	return d.Kind == store.MemoryMessage && d.Role == "user" && strings.HasPrefix(d.Text, store.OpsbotNote)
}

// isQuestion says whether a message of the record is a person's.
func isQuestion(d store.MemoryHit) bool {
	return d.Kind == store.MemoryMessage && d.Role == "user" && !isNote(d)
}

// messageWhat is a message's timeline entry: a person's question,
// opsbot's answer, or opsbot's note ("opsbot: plan results: …").
func messageWhat(d store.MemoryHit) string {
	switch {
	case isNote(d):
		return "opsbot: " + noteText(d.Text)
	case d.Role == "user":
		return "question: " + clip(d.Text, 200)
	}
	return "answer: " + clip(d.Text, 200)
}

// noteText is what opsbot's note says, without its marker and its
// instruction to the model: "plan results: The plan "x" ended: …".
func noteText(text string) string {
	_, body, ok := strings.Cut(text, "] ")
	if !ok {
		body = text
	}
	body = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(body), "Tell the person what this means."))
	kind := "note"
	switch {
	case strings.HasPrefix(body, "The plan "):
		kind = "plan results"
	case strings.HasPrefix(body, "A background job"):
		kind = "job ended"
	}
	var parts []string
	for line := range strings.Lines(body) {
		if line = strings.TrimSuffix(strings.TrimSpace(line), "."); line != "" {
			parts = append(parts, line)
		}
	}
	return kind + ": " + clip(strings.Join(parts, "; "), 300)
}

// planWhat is a plan as a reader reads it: its goal, how many steps,
// and (withSteps) each step's command and target; never its canonical
// text.
func planWhat(canonical string, withSteps bool) string {
	p, err := approvals.ParsePlan(canonical)
	if err != nil {
		return "a plan whose text is not readable"
	}
	if !withSteps {
		return fmt.Sprintf("plan: %s (%d steps)", clip(p.Goal, 200), len(p.Steps))
	}
	steps := make([]string, len(p.Steps))
	for i, s := range p.Steps {
		steps[i] = fmt.Sprintf("step %d `%s` on %s", i+1, mdCode(s.Command), s.Target)
	}
	return fmt.Sprintf("plan: %s (%d steps: %s)", clip(p.Goal, 200), len(p.Steps), strings.Join(steps, "; "))
}

// planApprovers fills who approved each command that ran as a step of
// an approved plan of the thread (the store matches a command to an
// approval of that very command only), and returns each such command's
// plan (by audit row) as planWhat says it.
func planApprovers(cmds []store.ThreadCommand, as []store.ThreadApproval) map[int64]string {
	plans := map[int64]string{}
	for i, c := range cmds {
		if c.ApprovedBy != "" {
			continue
		}
		for _, a := range as {
			if a.Action == "approval.approved" && !a.At.After(c.At) && planHas(a.Command, c.Text) {
				cmds[i].ApprovedBy, plans[c.AuditID] = a.Actor, planWhat(a.Command, false)
				if asker := requesterOf(as, a.ApprovalID); asker != "" {
					cmds[i].Actor = asker // opsbot ran the step; the plan's requester asked for it
				}
			}
		}
	}
	return plans
}

// requesterOf is who asked for approval request id ("" when its request
// row is not among as).
func requesterOf(as []store.ThreadApproval, id string) string {
	for _, a := range as {
		if a.ApprovalID == id && a.Action == "approval.request" {
			return a.Actor
		}
	}
	return ""
}

// planHas says whether canonical is a plan with a step running command.
func planHas(canonical, command string) bool {
	p, err := approvals.ParsePlan(canonical)
	if err != nil {
		return false
	}
	for _, s := range p.Steps {
		if s.Command == command {
			return true
		}
	}
	return false
}
