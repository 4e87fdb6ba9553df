package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/opsbot/opsbot/agent/tools"
	"github.com/opsbot/opsbot/store"
)

// Prose is what a model writes of a postmortem: the sections that are
// judgement, not record. The timeline and the commands are never the
// model's: they come from the store.
type Prose struct {
	// Summary is the model's text under none of the three headings (all
	// of a reply written as plain paragraphs).
	Summary, Impact, Fix, FollowUps string
}

// ProseWriter writes a postmortem's prose from the thread's record (the
// timeline and commands as text); nil, or an error, leaves the prose to
// a plain summary of the record, saying no model wrote it.
type ProseWriter func(ctx context.Context, record string) (Prose, error)

// threadRecord is what a postmortem and a summary read of a thread.
type threadRecord interface {
	Thread(ctx context.Context, sessionID int64) ([]store.MemoryHit, error)
	ThreadCommands(ctx context.Context, sessionID int64) ([]store.ThreadCommand, error)
	ThreadApprovals(ctx context.Context, sessionID int64) ([]store.ThreadApproval, error)
	MessageRefs(ctx context.Context, sessionID int64) (map[int64]store.MessageRef, error)
	RefExists(ctx context.Context, sessionID, auditID, seq int64) (bool, error)
	tokenCounter // a model's calls for the thread count in its tokens
}

var _ threadRecord = (*store.Memory)(nil)

// Postmortem is the thread's postmortem in markdown: its timeline (every
// entry a message or an audit row, with its time and reference), the
// impact, what was run and by whom, what fixed it, and follow-ups. Every
// timeline entry's reference is checked against the store before it is
// returned.
//
// A reply of the model's it cannot use is logged on log, in words.
func Postmortem(ctx context.Context, rec threadRecord, sessionID int64, thread store.ThreadKey, prose ProseWriter, log *slog.Logger) (string, error) {
	docs, err := rec.Thread(ctx, sessionID)
	if err != nil {
		return "", err
	}
	cmds, err := rec.ThreadCommands(ctx, sessionID)
	if err != nil {
		return "", err
	}
	entries, err := threadTimeline(ctx, rec, sessionID, docs)
	if err != nil {
		return "", err
	}
	if bad, err := unreferenced(ctx, rec, sessionID, entries); err != nil || bad > 0 {
		return "", errors.Join(err, fmt.Errorf("postmortem: %d timeline entries without a reference on record", bad))
	}
	timeline := lines(entries)
	record := strings.Join(timeline, "\n") + "\n\n" + strings.Join(commandRows(cmds), "\n")
	p, note := writeProse(ctx, prose, record, cmds, log)
	return postmortemDoc(docs, thread, timeline, cmds, p, note), nil
}

// postmortemDoc lays the document out: the record's sections and the
// prose, note (which prose no model wrote) last.
func postmortemDoc(docs []store.MemoryHit, thread store.ThreadKey, timeline []string, cmds []store.ThreadCommand, p Prose, note string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Postmortem: %s\n\n%s, %s to %s (UTC).\n\n", postmortemTitle(docs), tools.ThreadRef(thread),
		docs[0].At.UTC().Format("2006-01-02 15:04"), docs[len(docs)-1].At.UTC().Format("2006-01-02 15:04"))
	if p.Summary != "" {
		fmt.Fprintf(&b, "## Summary\n\n%s\n\n", p.Summary)
	}
	fmt.Fprintf(&b, "## Timeline\n\nFrom the thread's messages and the audit trail; each entry names its record.\n\n%s\n\n", strings.Join(timeline, "\n"))
	fmt.Fprintf(&b, "## Impact\n\n%s\n\n", p.Impact)
	b.WriteString("## What was run, and by whom\n\n")
	if len(cmds) == 0 {
		b.WriteString("No command ran in this thread.\n\n")
	} else {
		b.WriteString("| time (UTC) | host | command | exit | asked by | approved by | record |\n|---|---|---|---|---|---|---|\n")
		b.WriteString(strings.Join(commandRows(cmds), "\n") + "\n\n")
	}
	fmt.Fprintf(&b, "## What fixed it\n\n%s\n\n## Follow-ups\n\n%s\n", p.Fix, p.FollowUps)
	if note != "" {
		b.WriteString("\n_" + note + "_\n")
	}
	return b.String()
}

// ErrNothingOnRecord is Postmortem's and Summary's error for a thread
// with no message or command on record.
var ErrNothingOnRecord = errors.New("nothing on record in this thread")

// threadTimeline is the timeline of the thread whose memory is docs;
// ErrNothingOnRecord when it is empty.
func threadTimeline(ctx context.Context, rec threadRecord, sessionID int64, docs []store.MemoryHit) ([]timelineEntry, error) {
	approvals, err := rec.ThreadApprovals(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	refs, err := rec.MessageRefs(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	entries := timelineOf(docs, approvals, refs)
	if len(entries) == 0 {
		return nil, ErrNothingOnRecord
	}
	return entries, nil
}

func commandRows(cmds []store.ThreadCommand) []string {
	rows := make([]string, len(cmds))
	for i, c := range cmds {
		exit := "?"
		if c.HasExit {
			exit = strconv.Itoa(c.ExitCode)
		}
		approved := person(c.ApprovedBy)
		if approved == "" {
			approved = "not needed"
		}
		rows[i] = fmt.Sprintf("| %s | %s | `%s` | %s | %s | %s | %s |", c.At.UTC().Format("15:04:05"), c.Host,
			mdCode(strings.ReplaceAll(c.Text, "|", `\|`)), exit, person(c.Actor), approved, auditRef(c.AuditID))
	}
	return rows
}

// writeProse asks the model for the prose, and fills what it did not
// write from the record. note says which sections no model wrote, and
// why ("" when the model wrote them all); a reply it cannot use is
// logged, in words and without its text.
func writeProse(ctx context.Context, prose ProseWriter, record string, cmds []store.ThreadCommand, log *slog.Logger) (Prose, string) {
	var p Prose
	why := ""
	if prose != nil {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		var err error
		if p, err = prose(ctx, record); err != nil {
			why = "the model's reply was not used: " + proseFailure(err)
			log.Warn("postmortem: the model's prose was not used; the document restates the record", "why", err.Error())
			p = Prose{}
		}
	}
	var missing []string
	fill := func(field *string, name, fromRecord string) {
		if *field == "" {
			*field, missing = fromRecord, append(missing, name)
		}
	}
	fill(&p.Impact, "Impact", "Not assessed.")
	fill(&p.Fix, "What fixed it", recordedFix(cmds))
	fill(&p.FollowUps, "Follow-ups", "None recorded.")
	switch {
	case len(missing) == 0:
		return p, ""
	case len(missing) == 3 && why != "":
		return p, "No model wrote the prose sections (" + why + "): they restate the record above."
	case len(missing) == 3 && prose == nil:
		return p, "No model wrote the prose sections: they restate the record above."
	}
	return p, "The model did not write " + strings.Join(missing, ", ") + ": from the record above."
}

// proseFailure is why the model's prose was not used, in words a
// reader of the document may see: a reply parseProse refused says so;
// a failed request is not detailed (the log has it).
func proseFailure(err error) string {
	var refused proseRefused
	if errors.As(err, &refused) {
		return string(refused)
	}
	return "the request to the model failed"
}

// proseRefused is parseProse's error: why a reply had nothing to take.
type proseRefused string

func (e proseRefused) Error() string { return string(e) }

// recordedFix is the last approved command that succeeded, as the
// record has it.
func recordedFix(cmds []store.ThreadCommand) string {
	for i := len(cmds) - 1; i >= 0; i-- {
		if c := cmds[i]; c.ApprovedBy != "" && c.HasExit && c.ExitCode == 0 {
			return fmt.Sprintf("`%s` on %s, approved by %s (%s).", mdCode(c.Text), c.Host, person(c.ApprovedBy), auditRef(c.AuditID))
		}
	}
	return "No command that changed something is on record."
}

// postmortemTitle is the thread's first question (or message), on one line.
func postmortemTitle(docs []store.MemoryHit) string {
	for _, d := range docs {
		if d.Kind == store.MemoryMessage && d.Role == "user" {
			return clip(d.Text, 100)
		}
	}
	for _, d := range docs {
		if d.Kind != store.MemoryCommand {
			return clip(d.Text, 100)
		}
	}
	return "an incident"
}

// mdCode keeps text inside one inline code span.
func mdCode(s string) string { return strings.ReplaceAll(clip(s, 500), "`", "'") }

// clip folds text onto one line and cuts it at n runes.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
