package bot

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/store"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// Each stage of the inbound path alone, over hand-written fakes: what it
// lets through, what it ends, and what the thread is told.

// stageOut is a stage's way out: one fake platform, and the crew whose
// goroutines a test waits for.
func stageOut() (*Platforms, *fakeConn, *crew) {
	conn := newFakeConn(connectors.Limits{MaxText: 4000})
	return NewPlatforms(nil, logTo(&strings.Builder{}), conn), conn, &crew{}
}

// texts is what the thread shows, in order.
func texts(conn *fakeConn, thread string) []string {
	var out []string
	for _, m := range conn.thread(thread) {
		out = append(out, m.msg.Text)
	}
	return out
}

func message(thread, text string, mention bool) connectors.Event {
	return connectors.Event{ID: "e-" + thread, Kind: connectors.EventMessage, Platform: "fake", Channel: "C1", Thread: thread,
		User: connectors.User{ID: "alice", Name: "alice"}, Text: text, Mention: mention}
}

func TestRecordStage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		err   error
		first bool
		want  string // in the error; "" for none
	}{
		{"new", nil, true, ""},
		{"a retry", nil, false, ""},
		{"a full disk", &store.Unavailable{Reason: "the disk is full"}, false, "the disk is full"},
		{"a slow database", context.DeadlineExceeded, false, "did not answer within"},
		{"a refusal", errors.New("SQL logic error"), false, "refused the write"},
	}
	for _, tt := range tests {
		var got []byte
		s := recordStage{log: logTo(&strings.Builder{}), record: func(_ context.Context, platform, id string, data []byte) (int64, bool, error) {
			got = data
			return 9, tt.first, tt.err
		}}
		w := &work{ev: message("T1", "hi", true), jobEnd: true}
		err := s.Exec(t.Context(), w)
		switch {
		case tt.want == "" && (err != nil || w.inboxID != 9 || w.first != tt.first):
			t.Errorf("%s: err %v, row %d, first %v", tt.name, err, w.inboxID, w.first)
		case tt.want != "" && (!errors.Is(err, connectors.ErrNotRecorded) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "SQL")):
			t.Errorf("%s: err %v; want ErrNotRecorded saying %q", tt.name, err, tt.want)
		}
		if !strings.Contains(string(got), `"job_end":true`) || !strings.Contains(string(got), `"hi"`) {
			t.Errorf("%s: recorded %s; want the event and its job_end", tt.name, got)
		}
	}
}

func TestDedupeStageEndsARetrysLine(t *testing.T) {
	t.Parallel()
	m, err := NewMetrics(prometheus.NewPedanticRegistry())
	if err != nil {
		t.Fatal(err)
	}
	next := 0
	line := multiStage{dedupeStage{metrics: m}, stageFunc(func(context.Context, *work) error { next++; return nil })}
	if err := line.Exec(t.Context(), &work{ev: message("T1", "hi", true), first: true}); err != nil || next != 1 {
		t.Errorf("a new event: err %v, passed on %d times", err, next)
	}
	if err := line.Exec(t.Context(), &work{ev: message("T1", "hi", true)}); err != nil || next != 1 {
		t.Errorf("a retry: err %v, passed on %d times; want it dropped", err, next)
	}
	if n := testutil.ToFloat64(m.events.WithLabelValues("fake", "duplicate")); n != 1 {
		t.Errorf("%v duplicates counted; want the retry", n)
	}
}

func TestAdmitStage(t *testing.T) {
	t.Parallel()
	click := connectors.Event{Kind: connectors.EventAction, Platform: "fake", Channel: "C1", Thread: "T2", User: connectors.User{ID: "mallory"}}
	tests := []struct {
		name    string
		w       work
		session bool
		ok      bool
		told    string // in the thread
	}{
		{"a mention", work{ev: message("T1", "hi", true)}, false, true, ""},
		{"a click from someone not let in", work{ev: click}, false, false, "may not use opsbot"},
		{"a reply in a thread with a session", work{ev: message("T3", "and now?", false)}, true, true, ""},
		{"a reply in a thread without one", work{ev: message("T4", "lunch?", false)}, false, false, ""},
		{"a job's end", work{ev: message("T5", "the job ended", false), jobEnd: true}, false, true, ""},
	}
	for _, tt := range tests {
		out, conn, c := stageOut()
		cfg := Config{Access: map[string][]string{"C1": {"alice"}}}
		s := admitStage{cfg: cfg, busy: func(threadID) bool { return false }, out: out, crew: c, log: logTo(&strings.Builder{}),
			hasSession: func(context.Context, store.ThreadKey) (bool, error) { return tt.session, nil }}
		err := s.Exec(t.Context(), &tt.w)
		c.wait()
		if (err == nil) != tt.ok {
			t.Errorf("%s: err %v; want admitted %v", tt.name, err, tt.ok)
		}
		if said := strings.Join(texts(conn, tt.w.ev.Thread), "\n"); tt.told == "" && said != "" || !strings.Contains(said, tt.told) {
			t.Errorf("%s: the thread read %q; want %q", tt.name, said, tt.told)
		}
	}
	out, conn, c := stageOut()
	s := admitStage{cfg: Config{Access: map[string][]string{"C1": {"bob"}}}, out: out, crew: c}
	if err := s.Exec(t.Context(), &work{ev: message("T6", "hi", true)}); !errors.Is(err, errDone) {
		t.Errorf("a mention from someone not let in went on: %v", err)
	}
	c.wait()
	if said := texts(conn, "T6"); len(said) != 1 || !strings.Contains(said[0], "Sorry alice") {
		t.Errorf("a mention from someone not let in was told %q", said)
	}
}

func TestRouteStage(t *testing.T) {
	t.Parallel()
	out, conn, c := stageOut()
	ts := newThreads(Config{}, c, out)
	var clicked []string
	var finished []int64
	s := routeStage{threads: ts, out: out, crew: c,
		click:    func(_ context.Context, ev connectors.Event) { clicked = append(clicked, ev.ActionID) },
		finished: func(_ context.Context, id int64) { finished = append(finished, id) }}

	w := &work{ev: connectors.Event{Kind: connectors.EventAction, Platform: "fake", ActionID: ActionApprove}, inboxID: 4}
	if err := s.Exec(t.Context(), w); !errors.Is(err, errDone) || !w.handed {
		t.Errorf("a click: err %v, handed %v; want it handed to its goroutine", err, w.handed)
	}
	c.wait()
	if len(clicked) != 1 || len(finished) != 1 || finished[0] != 4 {
		t.Errorf("a click: acted on %v, rows finished %v; want the click, then its row 4", clicked, finished)
	}
	if err := s.Exec(t.Context(), &work{ev: message("T1", "stop", true)}); !errors.Is(err, errDone) {
		t.Errorf("a stop went on to the queue: %v", err)
	}
	if err := s.Exec(t.Context(), &work{ev: message("T1", "df -h?", true)}); err != nil {
		t.Errorf("a message did not go on to the queue: %v", err)
	}
	c.wait()
	if said := texts(conn, "T1"); len(said) != 0 {
		t.Errorf("a stop with nothing running was answered %q", said)
	}
}

func TestQueueStage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		behind, ok     bool
		full           string
		jobEnd, handed bool
		told           string
		replayed       bool
	}{
		{"queued", false, true, "", false, true, "", false},
		{"behind the running work", true, true, "", false, true, queuedNote, false},
		{"behind, recorded by a previous process (told then)", true, true, "", false, true, "", true},
		{"the bot is full", false, false, "this thread is busy", false, false, "Not taken: this thread is busy.", false},
		{"shutting down", false, false, "", false, false, "", false},
		{"a job's end while shutting down", false, false, "", true, true, "", false},
	}
	for _, tt := range tests {
		out, conn, c := stageOut()
		var got queued
		s := queueStage{out: out, crew: c, enqueue: func(_ threadID, q queued) (bool, bool, string) { got = q; return tt.behind, tt.ok, tt.full }}
		w := &work{ev: message("T1", "hi", true), inboxID: 3, jobEnd: tt.jobEnd, first: !tt.replayed}
		if err := s.Exec(t.Context(), w); err != nil || w.handed != tt.handed || got.inboxID != 3 || got.jobEnd != tt.jobEnd {
			t.Errorf("%s: err %v, handed %v, queued %+v", tt.name, err, w.handed, got)
		}
		c.wait()
		if said := strings.Join(texts(conn, "T1"), "\n"); said != tt.told {
			t.Errorf("%s: the thread read %q; want %q", tt.name, said, tt.told)
		}
	}
}

func TestSessionStage(t *testing.T) {
	t.Parallel()
	out, conn, _ := stageOut()
	var acted, first []string
	s := sessionStage{out: out, log: logTo(&strings.Builder{}),
		open: func(_ context.Context, ev connectors.Event) (agent.SessionInfo, error) {
			if ev.Thread == "broken" {
				return agent.SessionInfo{}, errors.New("disk I/O error")
			}
			return agent.SessionInfo{ID: 5}, nil
		},
		act:   func(_ context.Context, _ connectors.Event, _ agent.SessionInfo, id string) { acted = append(acted, id) },
		first: func(_ context.Context, ev connectors.Event, _ agent.SessionInfo) { first = append(first, ev.Thread) }}

	w := &work{ev: message("T1", "hi", true)}
	if err := s.Exec(t.Context(), w); err != nil || w.sess.ID != 5 || len(first) != 1 {
		t.Errorf("a message: err %v, session %d, decided approvals acted on first %v", err, w.sess.ID, first)
	}
	if err := s.Exec(t.Context(), &work{ev: message("T2", "", false), followUp: "a1"}); !errors.Is(err, errDone) || len(acted) != 1 || acted[0] != "a1" {
		t.Errorf("a follow-up: err %v, acted on %v; want a1 and nothing more", err, acted)
	}
	if err := s.Exec(t.Context(), &work{ev: message("broken", "hi", true)}); !errors.Is(err, errDone) {
		t.Errorf("a session that cannot open went on: %v", err)
	}
	if said := texts(conn, "broken"); len(said) != 1 || !strings.HasPrefix(said[0], "Internal error (id ") || strings.Contains(said[0], "disk") {
		t.Errorf("a session that cannot open was told %q; want an internal error's id", said)
	}
}

func TestTurnStage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		agentOn bool
		ev      connectors.Event
		want    string // what answered: stream, run or command
	}{
		{"a question", true, connectors.Event{Text: "why?", Question: true}, "stream"},
		{"run", true, connectors.Event{Text: "RUN web-1 df -h"}, "run"},
		{"a command", true, connectors.Event{Text: "jobs"}, "command"},
		{"a command's word in a question", true, connectors.Event{Text: "help me read this log"}, "stream"},
		{"no agent: a command's word", false, connectors.Event{Text: "help me read this log"}, "command"},
		{"no agent: no command", false, connectors.Event{Text: "why is it slow"}, "command stream"},
	}
	for _, tt := range tests {
		var got []string
		s := turnStage{agentOn: tt.agentOn,
			stream: func(context.Context, connectors.Event, agent.SessionInfo) *answer {
				got = append(got, "stream")
				return &answer{}
			},
			run: func(_ context.Context, _ connectors.Event, _ agent.SessionInfo, args string) {
				got = append(got, "run")
			},
			command: func(_ context.Context, _ connectors.Event, _ agent.SessionInfo, word, _ string) bool {
				got = append(got, "command")
				return commandLine(word, "") || word == "help"
			}}
		w := &work{ev: tt.ev}
		err := s.Exec(t.Context(), w)
		if strings.Join(got, " ") != tt.want {
			t.Errorf("%s: answered by %v; want %s", tt.name, got, tt.want)
		}
		if streamed := strings.HasSuffix(tt.want, "stream"); streamed != (err == nil && w.answer != nil) {
			t.Errorf("%s: err %v, answer %v; want the render stage to have it: %v", tt.name, err, w.answer, streamed)
		}
	}
}

func TestRenderStageEndsOnlyAStreamedAnswer(t *testing.T) {
	t.Parallel()
	ended := 0
	s := renderStage{end: func(context.Context, connectors.Event, *answer) { ended++ }}
	s.Exec(t.Context(), &work{})
	s.Exec(t.Context(), &work{answer: &answer{}})
	if ended != 1 {
		t.Errorf("ended %d answers; want the one streamed", ended)
	}
}

// The finish stage asks the settled watch to look, however the work ended.
func TestFinishStageKicks(t *testing.T) {
	t.Parallel()
	kicks := 0
	s := finishStage{kick: func() { kicks++ }}
	if err := s.Exec(t.Context(), &work{}); err != nil || kicks != 1 {
		t.Errorf("err %v, kicks %d; want one kick", err, kicks)
	}
}
