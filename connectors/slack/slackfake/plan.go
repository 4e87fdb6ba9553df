package slackfake

import (
	"bytes"
	"encoding/json"
	"slices"
)

// planTask is a task card in a plan block, with exactly the fields Slack
// documents for it (docs.slack.dev, Block Kit: plan block, task card
// block).
type planTask struct {
	Type      string            `json:"type"`
	BlockID   string            `json:"block_id,omitempty"`
	TaskID    string            `json:"task_id"`
	Title     string            `json:"title"`
	Status    string            `json:"status,omitempty"`
	Details   *richText         `json:"details,omitempty"`
	Output    *richText         `json:"output,omitempty"`
	Sources   []json.RawMessage `json:"sources,omitempty"`
	HideTitle bool              `json:"hide_title,omitempty"`
}

// planBlock is a plan block as Slack documents it.
type planBlock struct {
	Type    string     `json:"type"`
	BlockID string     `json:"block_id,omitempty"`
	Title   string     `json:"title"`
	Tasks   []planTask `json:"tasks,omitempty"`
}

// richText is a rich_text block: its sections' text elements.
type richText struct {
	Type     string `json:"type"`
	BlockID  string `json:"block_id,omitempty"`
	Elements []struct {
		Type     string `json:"type"`
		Elements []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"elements"`
	} `json:"elements"`
}

// text is the rich text's plain text; ok is false when it is no
// rich_text of sections of text elements.
func (r *richText) text() (s string, ok bool) {
	if r == nil {
		return "", true
	}
	if r.Type != "rich_text" || len(r.Elements) == 0 {
		return "", false
	}
	for _, sec := range r.Elements {
		if sec.Type != "rich_text_section" {
			return "", false
		}
		for _, e := range sec.Elements {
			if e.Type != "text" {
				return "", false
			}
			s += e.Text
		}
	}
	return s, true
}

// Plan is a plan block as the fake keeps it: its title and its steps'
// cards.
type Plan struct {
	Title string
	Tasks []Task
}

// plans checks the plan blocks of a message's blocks as Slack does, and
// returns them: fields Slack does not document, a status it does not
// know ("completed"), a card without task_id or title, duplicate
// task_ids, more than 50 cards, and task_card blocks beside a plan block
// are invalid_blocks.
func plans(raw string) ([]Plan, string) {
	var blocks []json.RawMessage
	if raw == "" || json.Unmarshal([]byte(raw), &blocks) != nil {
		return nil, ""
	}
	var out []Plan
	cards := false
	for _, b := range blocks {
		var head struct{ Type string }
		json.Unmarshal(b, &head)
		cards = cards || head.Type == "task_card"
		if head.Type != "plan" {
			continue
		}
		p, ok := plan(b)
		if !ok {
			return nil, "invalid_blocks"
		}
		out = append(out, p)
	}
	if cards && len(out) > 0 {
		return nil, "invalid_blocks"
	}
	return out, ""
}

// messageCards checks the task_card blocks of a message's blocks (beside
// its text, not in a plan) as Slack documents them, and returns them as
// the message's cards; a card with a field Slack does not document, a
// status it does not know, no task_id or title, or a task_id twice is
// invalid_blocks.
func messageCards(raw string) ([]Task, string) {
	var blocks []json.RawMessage
	if raw == "" || json.Unmarshal([]byte(raw), &blocks) != nil {
		return nil, ""
	}
	var out []Task
	for _, b := range blocks {
		var head struct{ Type string }
		json.Unmarshal(b, &head)
		if head.Type != "task_card" {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		var t planTask
		if dec.Decode(&t) != nil {
			return nil, "invalid_blocks"
		}
		details, okD := t.Details.text()
		output, okO := t.Output.text()
		dup := slices.ContainsFunc(out, func(o Task) bool { return o.ID == t.TaskID })
		if t.TaskID == "" || t.Title == "" || dup || !okD || !okO || (t.Status != "" && !slices.Contains(taskStatuses, t.Status)) {
			return nil, "invalid_blocks"
		}
		out = append(out, Task{ID: t.TaskID, Title: t.Title, Status: t.Status, Details: details, Output: output, Updates: 1})
	}
	return out, ""
}

// plan decodes one plan block strictly.
func plan(raw json.RawMessage) (Plan, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var b planBlock
	if dec.Decode(&b) != nil || b.Title == "" || len(b.Tasks) > 50 {
		return Plan{}, false
	}
	p := Plan{Title: b.Title}
	for _, t := range b.Tasks {
		details, okD := t.Details.text()
		output, okO := t.Output.text()
		dup := slices.ContainsFunc(p.Tasks, func(o Task) bool { return o.ID == t.TaskID })
		if t.Type != "task_card" || t.TaskID == "" || t.Title == "" || dup || !okD || !okO ||
			(t.Status != "" && !slices.Contains(taskStatuses, t.Status)) {
			return Plan{}, false
		}
		p.Tasks = append(p.Tasks, Task{ID: t.TaskID, Title: t.Title, Status: t.Status, Details: details, Output: output})
	}
	return p, true
}

// Plan is the message's plan block, if it has one.
func (m Message) Plan() (Plan, bool) {
	for _, b := range m.Blocks {
		if b.Plan != nil {
			return *b.Plan, true
		}
	}
	return Plan{}, false
}
