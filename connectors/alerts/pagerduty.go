package alerts

import (
	"strings"
	"time"
)

// pdWebhook is a PagerDuty v3 webhook: one event, with the resource it is
// about in data (the incident, for incident.* events; a note names its
// incident in data.incident).
type pdWebhook struct {
	Event struct {
		ID           string    `json:"id"`
		EventType    string    `json:"event_type"`
		ResourceType string    `json:"resource_type"`
		OccurredAt   time.Time `json:"occurred_at"`
		Agent        *pdRef    `json:"agent"`
		Data         pdData    `json:"data"`
	} `json:"event"`
}

type pdRef struct {
	ID      string `json:"id"`
	Summary string `json:"summary"`
}

type pdData struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	HTMLURL   string    `json:"html_url"`
	Number    int       `json:"number"`
	Status    string    `json:"status"`
	Title     string    `json:"title"`
	CreatedAt time.Time `json:"created_at"`
	Urgency   string    `json:"urgency"`
	Service   *pdRef    `json:"service"`
	Priority  *pdRef    `json:"priority"`
	Incident  *pdRef    `json:"incident"`
}

func parsePagerDuty(body []byte) (Delivery, error) {
	var w pdWebhook
	if err := decode(body, &w); err != nil {
		return Delivery{}, err
	}
	ev, data := w.Event, w.Event.Data
	if !strings.HasPrefix(ev.EventType, "incident.") {
		return Delivery{}, shapeErr("event_type %q: expected an incident event (incident.triggered, incident.resolved …) of a v3 webhook", ev.EventType)
	}
	id := data.ID
	if data.Type != "incident" && data.Incident != nil {
		id = data.Incident.ID
	}
	if id == "" {
		return Delivery{}, shapeErr("no incident id in event.data: this is not a PagerDuty v3 webhook payload")
	}
	d := Delivery{Group: id, Status: Firing, Title: data.Title, URL: data.HTMLURL, Labels: pdLabels(data)}
	if ev.EventType == "incident.resolved" || data.Status == "resolved" {
		d.Status = Resolved
	}
	if data.Type == "incident" {
		a := Alert{ID: id, Status: d.Status, Labels: d.Labels, StartsAt: data.CreatedAt, URL: data.HTMLURL}
		if d.Status == Resolved {
			a.EndsAt = ev.OccurredAt
		}
		d.Alerts = []Alert{a}
	}
	d.Note = pdNote(ev.EventType, ev.Agent)
	return d, nil
}

// pdLabels are the incident's facts as labels, for routes: service,
// urgency and priority, and severity (critical for high urgency, warning
// for low) so that a route on severity takes incidents too.
func pdLabels(d pdData) map[string]string {
	l := map[string]string{"source": "pagerduty"}
	if d.Service != nil {
		l["service"] = d.Service.Summary
	}
	if d.Priority != nil {
		l["priority"] = d.Priority.Summary
	}
	if d.Urgency != "" {
		l["urgency"] = d.Urgency
		l["severity"] = map[string]string{"high": "critical", "low": "warning"}[d.Urgency]
	}
	return l
}

// pdNote says what happened, for events that are not a trigger or a
// resolve ("acknowledged by Ann").
func pdNote(eventType string, agent *pdRef) string {
	what := strings.ReplaceAll(strings.TrimPrefix(eventType, "incident."), "_", " ")
	if what == "triggered" || what == "resolved" {
		return ""
	}
	if agent != nil && agent.Summary != "" {
		return what + " by " + agent.Summary
	}
	return what
}
