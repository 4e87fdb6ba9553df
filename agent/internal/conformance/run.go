package conformance

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/testfake"
)

// Case is one exchange with the fake: what it answers, call after call,
// and what the caller of Stream must see.
type Case struct {
	Name    string
	Replies []testfake.Reply
	// Texts are the text deltas; nil: not checked piece by piece.
	Texts []string
	Text  string
	Calls []Call
	// Usage, when set, is the usage reported; NoUsage: none may be.
	Usage   *agent.Usage
	NoUsage bool
	Stop    agent.StopReason
	// Err are substrings of the error; nil: success.
	Err []string
	// Requests is how many calls the fake must get, Waits the waits
	// between them.
	Requests int
	Waits    []time.Duration
}

// Call is an expected tool call; Input is compared as JSON.
type Call struct{ ID, Name, Input string }

// Run plays each case against its own fake and provider, in parallel: the
// caller sees what the case says, a retry sends the very same request, and
// the waits are the case's.
func Run[S T[S]](t S, w Wire, cases []Case) {
	for _, c := range cases {
		t.Run(c.Name, func(t S) {
			t.Parallel()
			f := w.Fake(t, c.Replies...)
			p, s := w.Provider(t, f)
			o := testfake.Collect(t, p.Stream(context.Background(), testfake.Conversation()))
			Check(t, o, c)
			reqs := f.Requests()
			if len(reqs) != c.Requests {
				t.Errorf("requests = %d, want %d", len(reqs), c.Requests)
			}
			for i := 1; i < len(reqs); i++ {
				if !reflect.DeepEqual(reqs[i].Body, reqs[0].Body) {
					t.Errorf("retry %d sent a different request", i)
				}
			}
			if got := s.All(); !reflect.DeepEqual(got, c.Waits) {
				t.Errorf("waits = %v, want %v", got, c.Waits)
			}
		})
	}
}

// Check compares what the caller saw with what c expects.
func Check[S T[S]](t S, o testfake.Outcome, c Case) {
	t.Helper()
	if c.Texts != nil && !reflect.DeepEqual(o.Texts, c.Texts) {
		t.Errorf("text deltas = %q, want %q", o.Texts, c.Texts)
	}
	if o.Text() != c.Text {
		t.Errorf("text = %q, want %q", o.Text(), c.Text)
	}
	checkCalls(t, o.Calls, c.Calls)
	if c.Usage != nil && (o.Usage == nil || *o.Usage != *c.Usage) {
		t.Errorf("usage = %+v, want %+v", o.Usage, c.Usage)
	}
	if c.NoUsage && o.Usage != nil {
		t.Errorf("usage %+v from a server that sent none", o.Usage)
	}
	if o.Stop != c.Stop {
		t.Errorf("stop = %q, want %q", o.Stop, c.Stop)
	}
	checkErr(t, o.Err, c.Err)
}

func checkCalls[S T[S]](t S, got []agent.Block, want []Call) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("tool calls = %+v, want %d", got, len(want))
	}
	for i, c := range want {
		g := got[i]
		if g.Type != agent.BlockToolUse || g.ID != c.ID || g.Name != c.Name {
			t.Errorf("call %d = %s %s %s, want tool_use %s %s", i, g.Type, g.ID, g.Name, c.ID, c.Name)
		}
		if !json.Valid(g.Input) {
			t.Errorf("call %d input is not JSON: %s", i, g.Input)
		}
		testfake.JSONEqual(t, "call input", g.Input, c.Input)
	}
}

func checkErr[S T[S]](t S, err error, want []string) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Errorf("err = %v, want none", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("no error, want one with %q", want)
	}
	for _, s := range want {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("err = %q, want it to contain %q", err, s)
		}
	}
}
