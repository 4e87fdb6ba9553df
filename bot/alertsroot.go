package bot

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/alerts"
	"github.com/opsbot/opsbot/store"
)

// groupState is what the bot keeps of an alert group (alert_groups.state).
type groupState struct {
	Title  string            `json:"title"`
	URL    string            `json:"url,omitempty"`
	Alerts []alerts.Alert    `json:"alerts"`
	Labels map[string]string `json:"labels,omitempty"`
	Note   string            `json:"note,omitempty"`
	// Since is when the group began firing; LastNotice when its sender
	// last said it still fires.
	Since      time.Time `json:"since"`
	LastNotice time.Time `json:"last_notice"`
	// Investigate is its route's investigate.
	Investigate   bool               `json:"investigate,omitempty"`
	Investigation investigationState `json:"investigation,omitzero"`
	// Shown is the root's text as last posted: an update that would show
	// the same is not sent.
	Shown string `json:"shown,omitempty"`
}

// The investigation's statuses.
const (
	statusQueued  = "queued"
	statusRunning = "running"
	statusDone    = "done"
	statusFailed  = "failed"
	statusStopped = "stopped"
	statusNotRun  = "not investigated"
)

// investigationState is the summary an investigation keeps up to date.
type investigationState struct {
	Status string `json:"status,omitempty"`
	// Why says why it is queued or was not run.
	Why      string     `json:"why,omitempty"`
	Started  time.Time  `json:"started,omitzero"`
	Targets  []string   `json:"targets,omitempty"`
	Unknown  []string   `json:"unknown,omitempty"`
	Cause    string     `json:"cause,omitempty"`
	Next     string     `json:"next,omitempty"`
	Evidence []evidence `json:"evidence,omitempty"`
	Proposed []string   `json:"proposed,omitempty"`
}

// evidence is one command an investigation ran.
type evidence struct {
	Host    string `json:"host"`
	Command string `json:"command"`
	Exit    int    `json:"exit"`
	Failed  string `json:"failed,omitempty"`
}

// merge takes a delivery into the state: its alerts replace those with
// the same id, new ones are added, none is dropped.
func (s *groupState) merge(d alerts.Delivery, received time.Time) {
	if d.Title != "" && (s.Title == "" || len(d.Alerts) > 0) {
		s.Title = d.Title
	}
	s.URL = cmpOr(d.URL, s.URL)
	if d.Note != "" {
		s.Note = d.Note
	}
	if s.Labels == nil {
		s.Labels = d.Labels
	}
	changed := false
	for _, al := range d.Alerts {
		if i := slices.IndexFunc(s.Alerts, func(x alerts.Alert) bool { return x.ID == al.ID }); i >= 0 {
			changed = changed || !reflect.DeepEqual(s.Alerts[i], al)
			s.Alerts[i] = al
		} else {
			s.Alerts, changed = append(s.Alerts, al), true
		}
	}
	if d.Status == alerts.Firing {
		if s.Since.IsZero() || !s.firingSince().IsZero() && s.firingSince().Before(s.Since) {
			s.Since = cmpOrTime(s.firingSince(), received)
		}
		// The same news again within a minute (a sender's retry) is not a
		// new notice: the root stays as it is.
		if changed || received.Sub(s.LastNotice) >= repeatIsNews {
			s.LastNotice = received
		}
	}
}

// repeatIsNews is how long after the last notice the same alerts again
// count as a new notice (Alertmanager's repeat_interval is hours; a
// retry comes within seconds).
const repeatIsNews = time.Minute

// firingSince is when the earliest firing alert started (zero: none says).
func (s *groupState) firingSince() time.Time {
	var t time.Time
	for _, a := range s.Alerts {
		if a.Status == alerts.Firing && !a.StartsAt.IsZero() && (t.IsZero() || a.StartsAt.Before(t)) {
			t = a.StartsAt
		}
	}
	return t
}

// resolvedAt is when the group ended: its last alert's end, else when the
// news came.
func resolvedAt(s *groupState, received time.Time) time.Time {
	var t time.Time
	for _, a := range s.Alerts {
		if a.EndsAt.After(t) {
			t = a.EndsAt
		}
	}
	return cmpOrTime(t, received)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func cmpOrTime(a, b time.Time) time.Time {
	if !a.IsZero() {
		return a
	}
	return b
}

// rootShownAlerts is how many alerts the root lists.
const rootShownAlerts = 15

// rootMessage is the group's summary: status and title, when it began,
// its alerts, and its investigation. The alerts' words come from the
// sender: they are shown as quoted data, never as markup or mentions.
func rootMessage(g *store.AlertGroup, s *groupState, now time.Time) connectors.Message {
	var b strings.Builder
	if g.Status == string(alerts.Resolved) {
		fmt.Fprintf(&b, "✅ **RESOLVED** · %s\n", plainText(s.Title, 200))
		fmt.Fprintf(&b, "Fired %s, resolved %s (lasted %s)", clock(s.Since, now), clock(g.ResolvedAt, now), spell(g.ResolvedAt.Sub(s.Since)))
	} else {
		fmt.Fprintf(&b, "🔴 **FIRING** · %s\n", plainText(s.Title, 200))
		fmt.Fprintf(&b, "Still firing since %s (last notice %s)", clock(s.Since, now), clock(s.LastNotice, now))
	}
	fmt.Fprintf(&b, " · source `%s`", g.Source)
	if s.Note != "" {
		fmt.Fprintf(&b, " · %s", plainText(s.Note, 100))
	}
	b.WriteString("\n\n")
	writeAlerts(&b, s, now)
	writeInvestigation(&b, s)
	text := strings.TrimRight(b.String(), "\n")
	m := connectors.Message{Text: text, ThreadName: "alert: " + plainText(s.Title, 80)}
	if s.Investigation.Status == statusDone {
		m.Feedback = alertTurn(g) // the summary takes feedback like an answer
	}
	return m
}

func writeAlerts(b *strings.Builder, s *groupState, now time.Time) {
	firing := 0
	for _, a := range s.Alerts {
		if a.Status == alerts.Firing {
			firing++
		}
	}
	fmt.Fprintf(b, "**Alerts** (%d firing, %d resolved)\n", firing, len(s.Alerts)-firing)
	for i, a := range s.Alerts {
		if i == rootShownAlerts {
			fmt.Fprintf(b, "• … and %d more\n", len(s.Alerts)-i)
			break
		}
		mark, when := "🔴", "since "+clock(a.StartsAt, now)
		if a.Status == alerts.Resolved {
			mark, when = "✅", "resolved "+clock(a.EndsAt, now)
		}
		if a.StartsAt.IsZero() && a.Status == alerts.Firing {
			when = "firing"
		}
		fmt.Fprintf(b, "• %s %s %s", mark, alertName(a, s.Labels), when)
		if sum := a.Annotations["summary"]; sum != "" {
			fmt.Fprintf(b, ": %s", plainText(sum, 160))
		}
		b.WriteString("\n")
	}
}

// alertName is what tells an alert from the others of its group: the
// labels it does not share with them, as code.
func alertName(a alerts.Alert, common map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(a.Labels)) {
		if _, shared := common[k]; !shared {
			parts = append(parts, k+"="+a.Labels[k])
		}
	}
	if len(parts) == 0 {
		return "`" + codeText(a.Labels["alertname"], 60) + "`"
	}
	return "`" + codeText(strings.Join(parts, " "), 120) + "`"
}

func writeInvestigation(b *strings.Builder, s *groupState) {
	inv := s.Investigation
	if inv.Status == "" {
		return
	}
	b.WriteString("\n**Investigation:** " + investigationLine(inv) + "\n")
	if len(inv.Unknown) > 0 {
		fmt.Fprintf(b, "Not in the inventory (not investigated there): %s\n", codeList(inv.Unknown))
	}
	if inv.Cause != "" {
		fmt.Fprintf(b, "**Suspected cause:** %s\n", inv.Cause)
	}
	if len(inv.Evidence) > 0 {
		b.WriteString("**Evidence:**\n")
		for _, e := range inv.Evidence {
			fmt.Fprintf(b, "• `%s` on %s → %s\n", codeText(e.Command, 120), codeText(e.Host, 60), exitWords(e))
		}
	}
	for _, p := range inv.Proposed {
		fmt.Fprintf(b, "• proposed, not run: `%s`\n", codeText(p, 160))
	}
	if inv.Next != "" {
		fmt.Fprintf(b, "**Next steps:** %s\n", inv.Next)
	}
}

func investigationLine(inv investigationState) string {
	targets := ""
	if len(inv.Targets) > 0 {
		targets = " on " + codeList(inv.Targets)
	}
	switch inv.Status {
	case statusRunning:
		return "running (read-only)" + targets
	case statusQueued, statusNotRun:
		return inv.Status + ": " + inv.Why
	case statusStopped:
		if inv.Why != "" { // a person's Stop
			return inv.Why
		}
		return "stopped: the alert resolved"
	case statusFailed:
		return "failed: " + inv.Why
	}
	return "done" + targets
}

func exitWords(e evidence) string {
	if e.Failed != "" {
		return e.Failed
	}
	return fmt.Sprintf("exit %d", e.Exit)
}

func codeList(xs []string) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = "`" + codeText(x, 60) + "`"
	}
	return strings.Join(out, ", ")
}

// clock is a time as a person reads it in a channel: the hour, and the
// day when it is not today.
func clock(t, now time.Time) string {
	if t.IsZero() {
		return "an unknown time"
	}
	t, now = t.UTC(), now.UTC()
	if t.YearDay() == now.YearDay() && t.Year() == now.Year() {
		return t.Format("15:04 UTC")
	}
	return t.Format("Jan 2 15:04 UTC")
}

// spell is a duration in minutes and hours.
func spell(d time.Duration) string {
	d = d.Round(time.Minute)
	switch {
	case d < time.Minute:
		return "under a minute"
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d.Minutes()))
	}
	h, m := int(d.Hours()), int(d.Minutes())%60
	if m == 0 {
		return fmt.Sprintf("%d h", h)
	}
	return fmt.Sprintf("%d h %d min", h, m)
}

// plainText is a sender's words made inert on every platform: one line,
// no mention or link markup (Slack's <!here>, Discord's @everyone), no
// emphasis, cut to n runes.
func plainText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.NewReplacer("<", "‹", ">", "›", "@", "@\u200b", "*", "∗", "`", "'", "[", "(", "]", ")", "~", "∼", "|", "¦").Replace(s)
	return cut(s, n)
}

// codeText is a sender's words for an inline code span: one line, no
// backtick to end it early.
func codeText(s string, n int) string {
	return cut(strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "`", "'"), n)
}

func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// alertTurn names an alert group's investigation for its feedback: short
// enough for a button's value whatever the sender's group key.
func alertTurn(g *store.AlertGroup) string {
	sum := sha256.Sum256([]byte(g.Source + "\x00" + g.Key))
	return "alert:" + hex.EncodeToString(sum[:8])
}
