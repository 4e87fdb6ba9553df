package testfake

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/opsbot/opsbot/agent"
)

// Outcome is what a caller saw of one streamed response.
type Outcome struct {
	Texts []string
	Calls []agent.Block
	Usage *agent.Usage
	Stop  agent.StopReason
	Err   error
}

// Text is the answer as the caller would have shown it.
func (o Outcome) Text() string { return strings.Join(o.Texts, "") }

// Collect drains a stream, checking that the sequence ends with exactly
// one EventStop or EventError and that nothing follows it.
func Collect(t T, seq func(func(agent.StreamEvent) bool)) Outcome {
	t.Helper()
	var o Outcome
	ended := false
	for ev := range seq {
		if ended {
			t.Errorf("event %+v after the end of the stream", ev)
		}
		switch ev.Kind {
		case agent.EventText:
			o.Texts = append(o.Texts, ev.Text)
		case agent.EventToolCall:
			o.Calls = append(o.Calls, ev.ToolCall)
		case agent.EventUsage:
			u := ev.Usage
			o.Usage = &u
		case agent.EventStop:
			o.Stop, ended = ev.StopReason, true
		case agent.EventError:
			o.Err, ended = ev.Err, true
		default:
			t.Errorf("unknown event kind %d", ev.Kind)
		}
	}
	if !ended {
		t.Errorf("the stream ended without EventStop or EventError")
	}
	return o
}

// JSONEqual compares two JSON documents by value.
func JSONEqual(t T, what string, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad expectation: %v", what, err)
	}
	g, _ := json.Marshal(got)
	var gv any
	_ = json.Unmarshal(g, &gv)
	if !reflect.DeepEqual(gv, w) {
		pg, _ := json.MarshalIndent(gv, "", "  ")
		pw, _ := json.MarshalIndent(w, "", "  ")
		t.Errorf("%s:\n got: %s\nwant: %s", what, pg, pw)
	}
}
