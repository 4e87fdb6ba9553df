package bot

import (
	"context"
	"iter"
	"log/slog"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/store"
)

// scripted answers every request with text and records the requests.
func scripted(text string, reqs *[]agent.Request) agent.Provider {
	return agent.ProviderFunc(func(_ context.Context, req agent.Request) iter.Seq[agent.StreamEvent] {
		*reqs = append(*reqs, req)
		return func(yield func(agent.StreamEvent) bool) {
			if yield(agent.StreamEvent{Kind: agent.EventText, Text: text}) {
				yield(agent.StreamEvent{Kind: agent.EventStop, StopReason: "end_turn"})
			}
		}
	})
}

// With a model set, postmortem takes its three prose sections and
// nothing else: a timeline the model writes is dropped, the record's
// stays, every entry referenced. summarize is the model's, from the
// record.
func TestPostmortemWithAScriptedModel(t *testing.T) {
	st, sess := incidentThread(t, 2)
	var reqs []agent.Request
	pen := proseModel{scripted("## Impact\nweb-1 served 502s.\n## Timeline\n- 03:00 invented [audit #999]\n"+
		"## What fixed it\nRestarting nginx.\n## Follow-ups\n- alert on upstream errors\n", &reqs), "test-model"}
	md, err := Postmortem(context.Background(), st.Memory(), sess.ID, store.ThreadKey{}, pen.writer(st.Memory(), sess.ID), slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md, "invented") || strings.Contains(md, "#999") || !strings.Contains(md, "## Impact\n\nweb-1 served 502s.") ||
		!strings.Contains(md, "## What fixed it\n\nRestarting nginx.") || strings.Contains(md, "No model wrote") {
		t.Errorf("postmortem with the model's prose:\n%s", md)
	}
	if len(reqs) != 1 || reqs[0].Model != "test-model" || !strings.Contains(reqs[0].Messages[0].Content[0].Text, "systemctl restart nginx") {
		t.Errorf("the model was asked %+v; want one request carrying the record", reqs)
	}
	reqs = nil
	pen = proseModel{scripted("Asked: why 502\nFound: nginx crashed\nDone: restarted\nOpen: nothing", &reqs), "test-model"}
	sum, err := modelSummary(context.Background(), st.Memory(), pen, sess.ID, slog.Default())
	if err != nil || !strings.HasPrefix(sum, "Asked: why 502") || !strings.Contains(sum, "written by the model") || len(reqs) != 1 {
		t.Errorf("summary = %q, %v after %d requests", sum, err, len(reqs))
	}
}
