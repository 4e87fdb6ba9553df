package bot

import (
	"bytes"
	"context"
	"iter"
	"log/slog"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/store"
)

// A model that replies plainly is heard: headings written any of the
// ways models write them, or no headings at all, end up in the
// document, and only what the model did not write restates the record.
func TestPostmortemTakesPlainReplies(t *testing.T) {
	st, sess := incidentThread(t, 1)
	for _, c := range []struct {
		name, reply string
		want        []string
	}{
		{"markdown headings", "# Impact\nweb-1 served 502s.\n\n# What fixed it\nRestarting nginx.\n\n# Follow-ups\n- lint the upstream block\n",
			[]string{"## Impact\n\nweb-1 served 502s.", "## What fixed it\n\nRestarting nginx.", "## Follow-ups\n\n- lint the upstream block"}},
		{"deeper headings and a preamble", "Here is the prose.\n\n### Impact\nweb-1 served 502s.\n### Resolution\nRestarting nginx.\n### Follow-ups\nNone.\n",
			[]string{"## Summary\n\nHere is the prose.", "## Impact\n\nweb-1 served 502s.", "## What fixed it\n\nRestarting nginx."}},
		{"bold labels", "**Impact:** web-1 served 502s.\n\n**What fixed it:** Restarting nginx.\n\n**Follow-ups:**\n- alert on 502s\n",
			[]string{"## Impact\n\nweb-1 served 502s.", "## What fixed it\n\nRestarting nginx.", "## Follow-ups\n\n- alert on 502s"}},
		{"bare lines", "Impact\nweb-1 served 502s.\n\nWhat fixed it\nRestarting nginx.\n\nFollow-ups\nNone.\n",
			[]string{"## Impact\n\nweb-1 served 502s.", "## What fixed it\n\nRestarting nginx."}},
		{"plain paragraphs", "nginx on web-1 crashed on a bad upstream block and served 502s.\n\nRestarting it, approved by bob, fixed it.",
			[]string{"## Summary\n\nnginx on web-1 crashed on a bad upstream block and served 502s.\n\nRestarting it, approved by bob, fixed it.",
				"## Impact\n\nNot assessed.\n", "The model did not write Impact, What fixed it, Follow-ups: from the record above."}},
	} {
		var reqs []agent.Request
		pen := proseModel{scripted(c.reply, &reqs), "test-model"}
		md, err := Postmortem(context.Background(), st.Memory(), sess.ID, store.ThreadKey{}, pen.writer(st.Memory(), sess.ID), slog.Default())
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(md, w) {
				t.Errorf("%s: the postmortem lacks %q:\n%s", c.name, w, md)
			}
		}
		if strings.Contains(md, "No model wrote the prose") || len(reqs) != 1 {
			t.Errorf("%s: the reply was thrown away (%d requests):\n%s", c.name, len(reqs), md)
		}
	}
}

// A reply with nothing to take is logged as a warning saying why, in
// words and without the reply's text, and the document says it too;
// Impact is "Not assessed." without the question pasted in.
func TestPostmortemSaysWhyAReplyWasRefused(t *testing.T) {
	st, sess := incidentThread(t, 1)
	var reqs []agent.Request
	pen := proseModel{scripted("## Timeline\n- 03:00 SECRET-BODY invented\n", &reqs), "test-model"}
	var logs bytes.Buffer
	md, err := Postmortem(context.Background(), st.Memory(), sess.ID, store.ThreadKey{}, pen.writer(st.Memory(), sess.ID), slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "timeline") || strings.Contains(logs.String(), "SECRET-BODY") {
		t.Errorf("log: %s; want a warning saying why, without the reply", logs.String())
	}
	for _, w := range []string{"No model wrote the prose sections (the model's reply was not used: its reply held only sections that are the record's",
		"## Impact\n\nNot assessed.\n\n"} {
		if !strings.Contains(md, w) {
			t.Errorf("the postmortem lacks %q:\n%s", w, md)
		}
	}
	if strings.Contains(md, "SECRET-BODY") || strings.Contains(md, "Not assessed:") {
		t.Errorf("the postmortem:\n%s", md)
	}
}

// A download never asks the model: before any `postmortem` it is built
// from the record and says so; after one it is the one posted, as
// posted.
func TestPostmortemDownloadIsThePostedOne(t *testing.T) {
	st, sess := incidentThread(t, 1)
	var reqs []agent.Request
	pen := proseModel{scripted("## Impact\nweb-1 served 502s.\n## What fixed it\nRestarting nginx.\n", &reqs), "test-model"}
	ctx, key := context.Background(), store.ThreadKey{Platform: "web", Channel: "ops", Thread: "m1"}
	before, err := PostedPostmortem(ctx, st.Memory(), sess.ID, key)
	if err != nil || len(reqs) != 0 || !strings.Contains(before, "No postmortem was posted in this thread") || !strings.Contains(before, "No model wrote the prose") {
		t.Errorf("download before any postmortem (%d model requests, %v):\n%s", len(reqs), err, before)
	}
	posted, err := postThreadPostmortem(ctx, st.Memory(), pen, sess.ID, key, slog.Default())
	if err != nil || len(reqs) != 1 {
		t.Fatalf("posting: %v after %d requests", err, len(reqs))
	}
	after, err := PostedPostmortem(ctx, st.Memory(), sess.ID, key)
	if err != nil || after != posted || len(reqs) != 1 {
		t.Errorf("download after posting (%d model requests, %v):\n%s\nwant the posted one:\n%s", len(reqs), err, after, posted)
	}
}

// The model calls of `postmortem` and `summarize` count in the thread's
// tokens, as a turn's do (opsbot stats, the budgets).
func TestPostmortemAndSummaryCountTokens(t *testing.T) {
	st, sess := incidentThread(t, 1)
	pen := proseModel{agent.ProviderFunc(func(context.Context, agent.Request) iter.Seq[agent.StreamEvent] {
		return func(yield func(agent.StreamEvent) bool) {
			_ = yield(agent.StreamEvent{Kind: agent.EventText, Text: "Asked: why\nImpact: 502s"}) &&
				yield(agent.StreamEvent{Kind: agent.EventUsage, Usage: agent.Usage{InputTokens: 100, CachedTokens: 40, OutputTokens: 10}}) &&
				yield(agent.StreamEvent{Kind: agent.EventStop, StopReason: "end_turn"})
		}
	}), "test-model"}
	ctx := context.Background()
	if _, err := postThreadPostmortem(ctx, st.Memory(), pen, sess.ID, store.ThreadKey{}, slog.Default()); err != nil {
		t.Fatal(err)
	}
	if _, err := modelSummary(ctx, st.Memory(), pen, sess.ID, slog.Default()); err != nil {
		t.Fatal(err)
	}
	got, err := st.Sessions().TokensToday(ctx, sess.ID)
	if want := (store.TokenUsage{Input: 200, Cached: 80, Output: 20}); err != nil || got != want {
		t.Errorf("the thread's tokens = %+v, %v; want %+v (two calls)", got, err, want)
	}
}

// summarize takes the model's summary as the model wrote it (a plain
// paragraph too), and falls back to the record's only for an empty
// reply, saying why in the log.
func TestSummaryTakesAPlainReply(t *testing.T) {
	st, sess := incidentThread(t, 1)
	var reqs []agent.Request
	pen := proseModel{scripted("nginx on web-1 crashed; bob approved a restart, which fixed it. Nothing is open.", &reqs), "test-model"}
	sum, err := modelSummary(context.Background(), st.Memory(), pen, sess.ID, slog.Default())
	if err != nil || !strings.HasPrefix(sum, "nginx on web-1 crashed; bob approved a restart") || !strings.Contains(sum, "written by the model") {
		t.Errorf("summary of a plain reply = %q, %v", sum, err)
	}
	pen = proseModel{scripted(" \n", &reqs), "test-model"}
	var logs bytes.Buffer
	sum, _ = modelSummary(context.Background(), st.Memory(), pen, sess.ID, slog.New(slog.NewTextHandler(&logs, nil)))
	if !strings.Contains(sum, "no model wrote this summary") || !strings.Contains(logs.String(), "summarize: the model's reply was empty; used the record-built summary") {
		t.Errorf("summary of an empty reply = %q; log %s", sum, logs.String())
	}
}
