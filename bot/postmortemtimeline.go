package bot

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/opsbot/opsbot/store"
)

// timelineEntry is one line of a postmortem's timeline: what happened,
// and the record a reader finds it by.
type timelineEntry struct {
	at   time.Time
	what string
	// ref is the record as a reader follows it: who wrote a message and
	// its id on the platform, or an audit row's id (`opsbot audit`).
	ref string
	// auditID or seq is the record, checked against the store.
	auditID, seq int64
}

func (e timelineEntry) line() string {
	return fmt.Sprintf("- %s — %s [%s]", e.at.UTC().Format("2006-01-02 15:04:05"), e.what, e.ref)
}

// timelineOf is the thread's messages, the commands that ran and its
// approval requests and decisions, oldest first.
func timelineOf(docs []store.MemoryHit, approvals []store.ThreadApproval, refs map[int64]store.MessageRef) []timelineEntry {
	var out []timelineEntry
	for _, d := range docs {
		switch d.Kind {
		case store.MemoryCommand:
			exit := "exit unknown"
			if d.HasExit {
				exit = fmt.Sprintf("exit %d", d.ExitCode)
			}
			out = append(out, timelineEntry{at: d.At, what: fmt.Sprintf("ran on %s: `%s` (%s)", d.Host, mdCode(d.Text), exit),
				ref: auditRef(d.AuditID), auditID: d.AuditID})
		case store.MemoryMessage:
			what := "answer"
			if d.Role == "user" {
				what = "question"
			}
			out = append(out, timelineEntry{at: d.At, what: what + ": " + clip(d.Text, 200), ref: messageRef(refs[d.Seq], d.Role), seq: d.Seq})
		}
	}
	decider := map[string]string{} // approval id → who decided it
	for _, a := range approvals {
		if a.Action == "approval.approved" || a.Action == "approval.denied" {
			decider[a.ApprovalID] = a.Actor
		}
	}
	for _, a := range approvals {
		if a.Action == "approval.vote" && decider[a.ApprovalID] == a.Actor {
			continue // the decision says it: a vote of one is the decision
		}
		out = append(out, timelineEntry{at: a.At, what: approvalWhat(a), ref: auditRef(a.AuditID), auditID: a.AuditID})
	}
	slices.SortStableFunc(out, func(a, b timelineEntry) int { return a.at.Compare(b.at) })
	return out
}

// approvalWhat says what an approval's audit row records.
func approvalWhat(a store.ThreadApproval) string {
	cmd := fmt.Sprintf("`%s` on %s", mdCode(a.Command), a.Host)
	switch a.Action {
	case "approval.request":
		return fmt.Sprintf("%s asked for approval to run %s", person(a.Actor), cmd)
	case "approval.vote":
		return fmt.Sprintf("%s voted on running %s", person(a.Actor), cmd)
	case "approval.expired":
		return fmt.Sprintf("the approval request for %s expired", cmd)
	}
	return fmt.Sprintf("%s %s %s", person(a.Actor), strings.TrimPrefix(a.Action, "approval."), cmd)
}

// auditRef names an audit row as `opsbot audit --json` shows it.
func auditRef(id int64) string { return fmt.Sprintf("audit row %d", id) }

// messageRef is who wrote a message and where it is on its platform.
func messageRef(r store.MessageRef, role string) string {
	who := "opsbot"
	if role == "user" {
		who = "a person this platform does not name here"
		if r.Author != "" {
			who = "@" + r.Author
		}
	}
	switch {
	case r.ID == "":
		return who + ", no platform message id on record"
	case r.Platform == "web":
		return who + ", web message " + r.ID
	case r.Platform == "slack":
		return who + ", Slack message ts " + r.ID
	}
	return fmt.Sprintf("%s, %s message %s", who, r.Platform, r.ID)
}

// person is how a document names who an audit row or approval names:
// "web:alice" is @alice; an actor that is no person ("opsbot",
// "scheduler", "alert:am") stays as written.
func person(actor string) string {
	platform, id, ok := strings.Cut(actor, ":")
	if !ok || id == "" || platform == "alert" {
		return actor
	}
	return "@" + id
}

// unreferenced counts the timeline entries whose record is not in the
// store.
func unreferenced(ctx context.Context, rec threadRecord, sessionID int64, entries []timelineEntry) (int, error) {
	bad := 0
	for _, e := range entries {
		if e.ref == "" || e.auditID == 0 && e.seq == 0 {
			bad++
			continue
		}
		ok, err := rec.RefExists(ctx, sessionID, e.auditID, e.seq)
		if err != nil {
			return bad, err
		}
		if !ok {
			bad++
		}
	}
	return bad, nil
}

// lines renders the entries.
func lines(entries []timelineEntry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.line()
	}
	return out
}
