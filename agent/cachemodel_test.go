package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/testfake"
)

// This file is the harness of the cache figures in docs/BENCHMARKS.md: a
// scripted 20-step investigation on either wire format, and a model of
// what a prompt cache would serve of each request. It reads only request
// bodies, so it measures any version of the loop.

// unit is one piece of a request in the order a provider reads its
// prompt: each tool, the system prompt, each message block. key is its
// JSON without cache marks; marked says it carried one.
type unit struct {
	key    string
	marked bool
}

// units splits a request body, in either format, into its prompt's units.
func units(body map[string]any) []unit {
	var out []unit
	add := func(prefix string, v map[string]any) {
		_, marked := v["cache_control"]
		c := make(map[string]any, len(v))
		for k, x := range v {
			if k != "cache_control" {
				c[k] = x
			}
		}
		b, _ := json.Marshal(c)
		out = append(out, unit{key: prefix + string(b), marked: marked})
	}
	for _, t := range list(body["tools"]) {
		add("tool:", t)
	}
	if s, ok := body["system"].(string); ok {
		add("system:", map[string]any{"text": s})
	}
	for _, s := range list(body["system"]) {
		add("system:", s)
	}
	for _, m := range list(body["messages"]) {
		blocks := list(m["content"])
		if len(blocks) == 0 { // OpenAI: one message is one unit
			add(fmt.Sprint(m["role"])+":", m)
			continue
		}
		for _, b := range blocks {
			add(fmt.Sprint(m["role"])+":", b)
		}
	}
	return out
}

// figures are one request's numbers, in estimated tokens (bytes / 4).
type figures struct {
	sent, prefix, marked, marks int
}

// cacheModel measures a sequence of requests: sent is the whole prompt;
// prefix what it shares with the request before (what an ideal prefix
// cache, OpenAI's, serves); marked what Anthropic's cache would read: the
// longest prefix ending at one of the request's marks, or up to 20 blocks
// before one, that an earlier request wrote at one of its marks.
func cacheModel(bodies []map[string]any) []figures {
	written := map[string]bool{}
	var prev []unit
	var out []figures
	for _, body := range bodies {
		us := units(body)
		var f figures
		prefixKeys := make([]string, len(us))
		var b strings.Builder
		size := make([]int, len(us)+1)
		for i, u := range us {
			b.WriteString(u.key)
			b.WriteByte(0)
			prefixKeys[i] = b.String()
			size[i+1] = size[i] + len(u.key)
		}
		f.sent = size[len(us)] / 4
		common := 0
		for common < len(us) && common < len(prev) && us[common].key == prev[common].key {
			common++
		}
		f.prefix = size[common] / 4
		best := 0
		for i, u := range us {
			if !u.marked {
				continue
			}
			f.marks++
			for j := i; j >= 0 && j >= i-20; j-- {
				if written[prefixKeys[j]] {
					best = max(best, j+1)
					break
				}
			}
		}
		f.marked = size[best] / 4
		for i, u := range us {
			if u.marked {
				written[prefixKeys[i]] = true
			}
		}
		prev = us
		out = append(out, f)
	}
	return out
}

// investigation runs a 20-step scripted investigation over w, the clock
// moving a minute a call, and returns the request bodies the API got.
// Its outputs (2–10 KB) pass a 20,000-token context budget about
// half-way, so that cutting old output is part of it.
func investigation(t *testing.T, w wire) []map[string]any {
	var turns []testfake.Turn
	outputs := map[string]string{}
	for i := range 19 {
		cmd := fmt.Sprintf("journalctl -u app-%d -n %d", i, 40+i*13%80)
		var out strings.Builder
		for l := range 30 + (i*37)%100 {
			fmt.Fprintf(&out, "Nov 27 09:%02d:%02d web-1 app-%d[%d]: request %d served in %d ms\n", l%60, (l*7)%60, i, 1000+i, l, (l*31)%400)
		}
		outputs[cmd] = out.String()
		turns = append(turns, testfake.Use(fmt.Sprintf("c%d", i), fmt.Sprintf("Step %d: reading app-%d's log.", i, i), "run_command", run("web-1", cmd)))
	}
	turns = append(turns, testfake.Say("app-7 is slow: its requests take up to 399 ms."))
	f, p := w.model(t, turns...)
	h, sess := sqliteSession(t)
	clock := time.Date(2026, 11, 27, 9, 0, 30, 0, time.UTC)
	env := agentEnvironment(func() time.Time { clock = clock.Add(time.Minute); return clock })
	a := investigator(p, h, &fleet{outputs: outputs})
	a.System, a.ContextBudget, a.MaxSteps = env.SystemPrompt, 20_000, 25
	if err := a.Turn(context.Background(), sess, "why is the app slow on web-1?", (&testfake.Recorder{}).Emit); err != nil {
		t.Fatal(err)
	}
	var bodies []map[string]any
	for _, r := range f.Requests() {
		bodies = append(bodies, r.Body)
	}
	return bodies
}

// logFigures logs the figures of a sequence of requests and returns their
// sums: the table of docs/BENCHMARKS.md.
func logFigures(t *testing.T, fs []figures) (total figures) {
	for i, f := range fs {
		t.Logf("request %2d: %6d tokens sent, %6d shared with the request before, %6d read at cache marks (%d marks)", i+1, f.sent, f.prefix, f.marked, f.marks)
		total.sent, total.prefix, total.marked = total.sent+f.sent, total.prefix+f.prefix, total.marked+f.marked
	}
	t.Logf("%d requests: %d tokens sent; %d (%.0f%%) shared with the request before; %d (%.0f%%) read at cache marks",
		len(fs), total.sent, total.prefix, pct(total.prefix, total.sent), total.marked, pct(total.marked, total.sent))
	return total
}

func pct(a, b int) float64 { return 100 * float64(a) / float64(max(b, 1)) }

// agentEnvironment is the prompt's environment of the investigation.
func agentEnvironment(now func() time.Time) agent.Environment {
	return agent.Environment{Hosts: []agent.HostInfo{{Name: "web-1", Groups: []string{"web"}}, {Name: "web-2", Groups: []string{"web"}}},
		Policy: "Read-only diagnostics: run at once. Anything else: waits for a person to approve it.", Now: now}
}
