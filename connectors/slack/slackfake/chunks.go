package slackfake

import (
	"encoding/json"
	"slices"
)

// Task is a task card of a streamed message, as its last task_update
// chunk left it.
type Task struct {
	ID, Title, Status, Details, Output string
	// Updates counts the chunks that changed it.
	Updates int
}

// chunk is one element of the chunks parameter of the streaming methods.
type chunk struct {
	Type    string `json:"type"`
	Text    string `json:"text"`
	ID      string `json:"id"`
	Title   string `json:"title"`
	Status  string `json:"status"`
	Details string `json:"details"`
	Output  string `json:"output"`
}

// taskStatuses are the statuses Slack documents for a task: "complete",
// not "completed".
var taskStatuses = []string{"pending", "in_progress", "complete", "error"}

// chunks applies a streaming call's chunks to m, or says why Slack would
// refuse them (the whole call then changes nothing).
func (s *Server) chunks(m *Message, raw string) string {
	if raw == "" {
		return ""
	}
	var cs []chunk
	if err := json.Unmarshal([]byte(raw), &cs); err != nil || len(cs) == 0 {
		return "invalid_chunks"
	}
	for _, c := range cs {
		switch c.Type {
		case "markdown_text", "plan_update", "blocks":
		case "task_update":
			if c.ID == "" || c.Title == "" || (c.Status != "" && !slices.Contains(taskStatuses, c.Status)) {
				return "invalid_chunks"
			}
		default:
			return "invalid_chunks"
		}
	}
	for _, c := range cs {
		switch c.Type {
		case "markdown_text":
			m.Markdown += c.Text
			continue
		case "plan_update", "blocks":
			continue // shown by Slack; the fake keeps only text and cards
		}
		i := slices.IndexFunc(m.Tasks, func(t Task) bool { return t.ID == c.ID })
		if i < 0 {
			m.Tasks = append(m.Tasks, Task{ID: c.ID})
			i = len(m.Tasks) - 1
		}
		t := &m.Tasks[i]
		t.Title, t.Updates = c.Title, t.Updates+1
		t.Status, t.Details, t.Output = orKeep(c.Status, t.Status), orKeep(c.Details, t.Details), orKeep(c.Output, t.Output)
	}
	return ""
}

// OpenTasks are m's task cards still pending or in progress.
func (m Message) OpenTasks() []Task {
	var open []Task
	for _, t := range m.Tasks {
		if t.Status != "complete" && t.Status != "error" {
			open = append(open, t)
		}
	}
	return open
}

// StoppedOpen are the messages whose stream the app stopped
// (chat.stopStream) while a task card of theirs was still pending or in
// progress: the card shows as running for good.
func (s *Server) StoppedOpen() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, msgs := range s.channels {
		for _, m := range msgs {
			if m.Stopped && len(m.OpenTasks()) > 0 {
				c := *m
				c.Tasks = slices.Clone(m.Tasks)
				out = append(out, c)
			}
		}
	}
	return out
}

func orKeep(v, old string) string {
	if v == "" {
		return old
	}
	return v
}

// validContextActions checks a context_actions block as Slack does: 1 to
// 5 elements, each feedback_buttons (both buttons, each with a plain_text
// label of at most 75 characters and a value) or icon_button. Other
// blocks pass.
func validContextActions(b Block) bool {
	if b.Type != "context_actions" {
		return true
	}
	if len(b.Elements) == 0 || len(b.Elements) > 5 {
		return false
	}
	for _, e := range b.Elements {
		switch e.Type {
		case "feedback_buttons":
			for _, fb := range []*FeedbackButton{e.Positive, e.Negative} {
				if fb == nil || fb.Text == nil || fb.Text.Type != "plain_text" || fb.Text.Text == "" || len([]rune(fb.Text.Text)) > 75 || fb.Value == "" {
					return false
				}
			}
		case "icon_button":
		default:
			return false
		}
	}
	return true
}
