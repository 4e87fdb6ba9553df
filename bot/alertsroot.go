package bot

import (
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
	// Change is what the last notice brought (changeFirst, changeRepeat,
	// or alerts added and resolved), for the root's second line.
	Change change `json:"change,omitzero"`
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
	// Turn is the investigation's stored turn (the turns table's id), which
	// the summary's feedback buttons name once it is done; 0 when none was
	// stored.
	Turn int64 `json:"turn,omitempty"`
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
	noted := d.Note != "" && d.Note != s.Note // a PagerDuty acknowledgement
	if d.Note != "" {
		s.Note = d.Note
	}
	if s.Labels == nil {
		s.Labels = d.Labels
	}
	first := s.LastNotice.IsZero()
	c, changed := s.mergeAlerts(d.Alerts)
	changed = changed || noted
	if d.Status == alerts.Firing {
		if s.Since.IsZero() || !s.firingSince().IsZero() && s.firingSince().Before(s.Since) {
			s.Since = cmpOrTime(s.firingSince(), received)
		}
		// The same news again within a minute (a sender's retry) is not a
		// new notice: the root stays as it is.
		if changed || received.Sub(s.LastNotice) >= repeatIsNews {
			s.LastNotice = received
			s.Change = c.kind(first, changed)
		}
	}
}

// mergeAlerts takes a delivery's alerts into the state and says how
// many were added and resolved, and whether any changed at all.
func (s *groupState) mergeAlerts(in []alerts.Alert) (change, bool) {
	var c change
	changed := false
	for _, al := range in {
		i := slices.IndexFunc(s.Alerts, func(x alerts.Alert) bool { return x.ID == al.ID })
		switch {
		case i < 0:
			s.Alerts, changed = append(s.Alerts, al), true
			c.Added++
			continue
		case s.Alerts[i].Status == alerts.Firing && al.Status == alerts.Resolved:
			c.Resolved++
		case s.Alerts[i].Status == alerts.Resolved && al.Status == alerts.Firing:
			c.Added++ // firing again is news like a new one
		}
		changed = changed || !reflect.DeepEqual(s.Alerts[i], al)
		s.Alerts[i] = al
	}
	return c, changed
}

// change is what a notice brought: alerts added (or firing again) and
// resolved; with neither, Repeat says it was the same set again.
type change struct {
	Added    int  `json:"added,omitempty"`
	Resolved int  `json:"resolved,omitempty"`
	Repeat   bool `json:"repeat,omitempty"`
	Updated  bool `json:"updated,omitempty"`
}

// kind is the change as the root tells it: a group's first notice is
// news of its own, whatever its alerts; the same set unchanged is a
// repeat; alerts changed otherwise (a PagerDuty acknowledgement) are an
// update.
func (c change) kind(first, changed bool) change {
	switch {
	case first:
		return change{}
	case c.Added == 0 && c.Resolved == 0:
		return change{Repeat: !changed, Updated: changed}
	}
	return c
}

// firingLine is the root's second line while the group fires: when it
// began, and what its last notice brought. Only a repeat (the sender's
// repeat interval: the same set again) says "still firing".
func firingLine(s *groupState, now time.Time) string {
	since := clock(s.Since, now)
	at := clock(s.LastNotice, now)
	c := s.Change
	if c.Repeat {
		return fmt.Sprintf("Still firing since %s (repeat notice %s)", since, at)
	}
	var news []string
	if c.Added > 0 {
		news = append(news, fmt.Sprintf("%s added", alertCount(c.Added)))
	}
	if c.Resolved > 0 {
		news = append(news, fmt.Sprintf("%s resolved", alertCount(c.Resolved)))
	}
	if c.Updated {
		news = append(news, "updated")
	}
	if len(news) == 0 {
		return fmt.Sprintf("Firing since %s", since)
	}
	return fmt.Sprintf("Firing since %s · %s %s", since, strings.Join(news, ", "), at)
}

func alertCount(n int) string {
	if n == 1 {
		return "1 alert"
	}
	return fmt.Sprintf("%d alerts", n)
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
		b.WriteString(firingLine(s, now))
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
		// The summary takes feedback like an answer: a click is kept with
		// the investigation's stored turn.
		m.Feedback = answerTurn(s.Investigation.Turn)
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
		// No label of its own (a PagerDuty incident, a generic alert):
		// its name, else the sender's id for it.
		return "`" + codeText(cmpOr(cmpOr(a.Labels["alertname"], a.ID), "alert"), 60) + "`"
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
