package alerts

import (
	"fmt"
	"net/http"
	"time"
)

// Status is whether an alert or a group still fires.
type Status string

// The statuses.
const (
	Firing   Status = "firing"
	Resolved Status = "resolved"
)

// Delivery is one recorded payload as the bot reads it: the group it
// belongs to, and the alerts it says fire or were resolved.
type Delivery struct {
	Source string
	// Group is the group's key within its source (Alertmanager's
	// groupKey, PagerDuty's incident id, a generic source's dedupe key).
	Group  string
	Status Status
	Title  string
	// Labels are what the group's alerts share: routes match on them.
	Labels map[string]string
	Alerts []Alert
	// URL links back to the sender (Alertmanager's externalURL, the
	// incident's page).
	URL string
	// Note is what a sender says of this delivery besides its alerts
	// (PagerDuty: "acknowledged by Ann").
	Note string
}

// Alert is one alert of a group.
type Alert struct {
	// ID is stable across deliveries (Alertmanager's fingerprint).
	ID          string            `json:"id"`
	Status      Status            `json:"status"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	StartsAt    time.Time         `json:"starts_at"`
	EndsAt      time.Time         `json:"ends_at,omitzero"`
	URL         string            `json:"url,omitempty"`
}

// ShapeError is a payload that is not JSON of its source's shape: the
// sender is told so in words (400).
type ShapeError struct{ Msg string }

// Error is what is wrong with the payload, in words.
func (e *ShapeError) Error() string { return e.Msg }

func shapeErr(format string, args ...any) error {
	return &ShapeError{Msg: fmt.Sprintf(format, args...)}
}

// Parse reads a payload of source s. The headers are the delivery's
// (PagerDuty's X-Webhook-Id is not needed to read it).
func Parse(s Source, body []byte) (Delivery, error) {
	var d Delivery
	var err error
	switch s.Type {
	case TypeAlertmanager, TypeGrafana:
		d, err = parseAlertmanager(body)
	case TypePagerDuty:
		d, err = parsePagerDuty(body)
	case TypeGeneric:
		d, err = parseGeneric(s.Fields, body)
	default:
		return d, shapeErr("source %q has no known type", s.Name)
	}
	d.Source = s.Name
	return d, err
}

// DeliveryID is the sender's id of a delivery, for dropping its retries:
// PagerDuty's X-Webhook-Id. Alertmanager sends none; its repeats change
// nothing once read (the bot compares the alerts).
func DeliveryID(s Source, h http.Header) string {
	if s.Type == TypePagerDuty {
		return h.Get("X-Webhook-Id")
	}
	return ""
}
