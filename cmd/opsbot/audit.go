package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/opsbot/opsbot/store"
)

func newAuditCmd() *cobra.Command {
	c := addDataDirFlag(&cobra.Command{
		Use:   "audit",
		Short: "Read the audit trail: who did what, on which host, when; as a table, JSON lines or CSV",
		Long: `Print the audit trail (every command run, approval request, vote and decision, job
start and end), oldest first: the latest --limit entries that match the filters.

  --who     a person: their key as the trail writes it (slack:U123, web:alice) or
            their id alone (U123, alice); also opsbot and scheduler
  --host    a host: the commands run there and the approval requests for it
  --since   entries at or after: a duration back from now (24h, 90m, 7d), a date
            (2026-11-27, local midnight) or a time (2026-11-27 14:00, RFC 3339)
  --until   entries before, in the same forms
  --id      the one entry with this number (a postmortem's "audit row N")

Output: a table (default: the entry's number first); --json, one JSON object per line (JSON Lines: id, at in
RFC 3339 UTC, who, action, subject, detail); --csv, RFC 4180 with a header row
(id,at,who,action,subject,detail; detail as JSON text). Secrets were redacted when
the entries were written and never appear.

Reads the database of --data-dir or store.path only: safe while 'opsbot run' runs.`,
		Example: "  opsbot audit --since 24h\n  opsbot audit --who alice --host db-1 --since 2026-11-01 --until 2026-12-01\n" +
			"  opsbot audit --id 42\n  opsbot audit --since 7d --limit 0 --csv > audit.csv\n  opsbot audit --json | jq 'select(.action == \"approval.approved\")'",
		Args: args(cobra.NoArgs),
		RunE: runAudit,
	})
	c.Flags().String("who", "", "only entries by this person (slack:U123, or U123)")
	c.Flags().String("host", "", "only entries about this host")
	c.Flags().String("since", "", "only entries at or after: 24h, 7d, 2026-11-27, 2026-11-27 14:00")
	c.Flags().String("until", "", "only entries before, in the forms of --since")
	c.Flags().Int64("id", 0, "only the entry with this number (a postmortem's \"audit row N\")")
	c.Flags().Int("limit", 100, "print the latest N matching entries (0: all)")
	c.Flags().Bool("json", false, "one JSON object per line (JSON Lines)")
	c.Flags().Bool("csv", false, "CSV (RFC 4180) with a header row")
	return c
}

// runAudit reads the filters, then prints the matching entries.
func runAudit(cmd *cobra.Command, _ []string) error {
	f, err := auditFilter(cmd, time.Now())
	if err != nil {
		return err
	}
	asJSON, _ := cmd.Flags().GetBool("json")
	asCSV, _ := cmd.Flags().GetBool("csv")
	if asJSON && asCSV {
		return usageError(fmt.Errorf("--json and --csv: choose one output"))
	}
	st, _, err := openReadStore(cmd)
	if err != nil {
		return err
	}
	defer st.Close()
	entries, err := st.Audit().Search(cmd.Context(), f)
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	switch {
	case asJSON:
		return auditJSON(w, entries)
	case asCSV:
		return auditCSV(w, entries)
	}
	return auditTable(w, entries)
}

// auditFilter reads the filter flags.
func auditFilter(cmd *cobra.Command, now time.Time) (store.AuditFilter, error) {
	var f store.AuditFilter
	f.Who, _ = cmd.Flags().GetString("who")
	f.Host, _ = cmd.Flags().GetString("host")
	f.Limit, _ = cmd.Flags().GetInt("limit")
	f.ID, _ = cmd.Flags().GetInt64("id")
	if f.ID < 0 {
		return f, usageError(fmt.Errorf("--id %d: give an audit entry's number (1 or more), as the first column of opsbot audit shows", f.ID))
	}
	if f.Limit < 0 {
		return f, usageError(fmt.Errorf("--limit %d: give a number of entries, or 0 for all", f.Limit))
	}
	since, _ := cmd.Flags().GetString("since")
	until, _ := cmd.Flags().GetString("until")
	var err error
	if f.Since, err = parseWhen("since", since, now); err != nil {
		return f, err
	}
	if f.Until, err = parseWhen("until", until, now); err != nil {
		return f, err
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until) {
		return f, usageError(fmt.Errorf("--since %s is not before --until %s: nothing can match", since, until))
	}
	return f, nil
}

// auditLine is an entry as --json writes it.
type auditLine struct {
	ID      int64           `json:"id"`
	At      string          `json:"at"`
	Who     string          `json:"who"`
	Action  string          `json:"action"`
	Subject string          `json:"subject"`
	Detail  json.RawMessage `json:"detail"`
}

func auditJSON(w io.Writer, entries []store.AuditEntry) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, e := range entries {
		if err := enc.Encode(auditLine{e.ID, e.At.UTC().Format(time.RFC3339Nano), e.Actor, e.Action, e.Subject, detailJSON(e.Detail)}); err != nil {
			return err
		}
	}
	return nil
}

func auditCSV(w io.Writer, entries []store.AuditEntry) error {
	cw := csv.NewWriter(w)
	cw.UseCRLF = true // RFC 4180's line ending
	cw.Write([]string{"id", "at", "who", "action", "subject", "detail"})
	for _, e := range entries {
		cw.Write([]string{strconv.FormatInt(e.ID, 10), e.At.UTC().Format(time.RFC3339Nano), e.Actor, e.Action, e.Subject, string(detailJSON(e.Detail))})
	}
	cw.Flush()
	return cw.Error()
}

// auditDetailWidth is how much of an entry's detail the table shows.
const auditDetailWidth = 100

func auditTable(w io.Writer, entries []store.AuditEntry) error {
	if len(entries) == 0 {
		fmt.Fprintln(w, "No audit entries match.")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTIME\tWHO\tACTION\tSUBJECT\tDETAIL")
	for _, e := range entries {
		d := string(detailJSON(e.Detail))
		if r := []rune(d); len(r) > auditDetailWidth {
			d = string(r[:auditDetailWidth-1]) + "…"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", e.ID, e.At.Local().Format("2006-01-02 15:04:05"), e.Actor, e.Action, e.Subject, d)
	}
	return tw.Flush()
}

// detailJSON is an entry's detail as compact JSON: {} when empty, a JSON
// string of the text when a row holds something else.
func detailJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("{}")
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		s, _ := json.Marshal(string(raw))
		return s
	}
	return b.Bytes()
}
