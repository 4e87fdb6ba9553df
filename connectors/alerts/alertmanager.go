package alerts

import (
	"bytes"
	"encoding/json"
	"time"
)

// amMessage is Alertmanager's webhook payload, version 4
// (notify/webhook.Message over template.Data); Grafana's contact point
// sends the same shape, with title and message added.
type amMessage struct {
	Version           string            `json:"version"`
	GroupKey          string            `json:"groupKey"`
	TruncatedAlerts   uint64            `json:"truncatedAlerts"`
	Status            string            `json:"status"`
	Receiver          string            `json:"receiver"`
	GroupLabels       map[string]string `json:"groupLabels"`
	CommonLabels      map[string]string `json:"commonLabels"`
	CommonAnnotations map[string]string `json:"commonAnnotations"`
	ExternalURL       string            `json:"externalURL"`
	Alerts            []amAlert         `json:"alerts"`
	// Title is Grafana's.
	Title string `json:"title"`
}

type amAlert struct {
	Status       string            `json:"status"`
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       time.Time         `json:"endsAt"`
	GeneratorURL string            `json:"generatorURL"`
	Fingerprint  string            `json:"fingerprint"`
}

func parseAlertmanager(body []byte) (Delivery, error) {
	var m amMessage
	if err := decode(body, &m); err != nil {
		return Delivery{}, err
	}
	if m.GroupKey == "" {
		return Delivery{}, shapeErr("no groupKey: this is not an Alertmanager webhook (version 4) payload")
	}
	if m.Status != string(Firing) && m.Status != string(Resolved) {
		return Delivery{}, shapeErr("status %q: expected firing or resolved", m.Status)
	}
	d := Delivery{Group: m.GroupKey, Status: Status(m.Status), Title: m.Title, Labels: m.CommonLabels, URL: m.ExternalURL}
	if d.Labels == nil {
		d.Labels = m.GroupLabels
	}
	for i, a := range m.Alerts {
		if a.Status != string(Firing) && a.Status != string(Resolved) {
			return Delivery{}, shapeErr("alerts[%d].status %q: expected firing or resolved", i, a.Status)
		}
		id := a.Fingerprint
		if id == "" {
			id = labelsKey(a.Labels)
		}
		d.Alerts = append(d.Alerts, Alert{ID: id, Status: Status(a.Status), Labels: a.Labels, Annotations: a.Annotations,
			StartsAt: a.StartsAt, EndsAt: endOf(a), URL: a.GeneratorURL})
	}
	if d.Title == "" {
		d.Title = amTitle(m)
	}
	return d, nil
}

// endOf is when a resolved alert ended; a firing one's endsAt is only when
// Alertmanager would take it as resolved without news.
func endOf(a amAlert) time.Time {
	if a.Status == string(Resolved) {
		return a.EndsAt
	}
	return time.Time{}
}

// amTitle is the group's alertname and summary, as a person names it.
func amTitle(m amMessage) string {
	name := m.CommonLabels["alertname"]
	if name == "" {
		name = m.GroupLabels["alertname"]
	}
	if s := m.CommonAnnotations["summary"]; s != "" {
		if name == "" {
			return s
		}
		return name + ": " + s
	}
	if name == "" {
		return "Alert group " + labelsKey(m.GroupLabels)
	}
	return name
}

// decode reads JSON, saying in words what is wrong with it.
func decode(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return shapeErr("the body is not JSON of this source's shape: %s", jsonWords(err))
	}
	return nil
}
