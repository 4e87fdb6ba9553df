package bot

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/persist"
	"github.com/opsbot/opsbot/agent/tools"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/approvals/redact"
	"github.com/opsbot/opsbot/approvals/redact/redacttest"
	"github.com/opsbot/opsbot/bot/render"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/executor"
	"github.com/opsbot/opsbot/policy"
	"github.com/opsbot/opsbot/store"
)

// halves are the first halves of the seeds: redacttest.Chunks cuts each
// seed there, so a renderer that showed a chunk as it came would show one.
func halves() []string {
	var out []string
	for _, s := range redacttest.Secrets() {
		out = append(out, s[:len(s)/2])
	}
	return out
}

// shownTexts is every text the platform ever showed in a thread, edits
// and stream appends included.
func shownTexts(conn *fakeConn, thread string) []string {
	var out []string
	for _, m := range conn.thread(thread) {
		out = append(out, m.history...)
		out = append(out, m.msg.Context)
	}
	return out
}

// An answer carrying the seeds, each split across two deltas 1.2 s apart:
// no post or edit shows a seed, nor the half of one that came first.
func TestRendererRedactsSecretsSplitAcrossDeltas(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		conn := newFakeConn(webLimits)
		red := redact.New(redacttest.OwnSecrets...)
		r := render.NewRenderer(t.Context(), &redactedConn{Connector: conn, red: red}, render.NewEditBudget(0), nil, nil, connectors.Dest{Platform: "fake", Channel: "C1", Thread: "T1"})
		for _, c := range redacttest.Chunks() {
			r.Write(c)
			time.Sleep(1200 * time.Millisecond)
			synctest.Wait()
		}
		r.Close(context.Background(), nil)
		shown := shownTexts(conn, "T1")
		if len(shown) < 3 {
			t.Fatalf("the answer was not streamed: %d texts shown", len(shown))
		}
		redacttest.AssertNoSecret(t, append(redacttest.Secrets(), halves()...), shown...)
		final := conn.thread("T1")[0].msg.Text
		if !strings.Contains(final, "[redacted aws-access-key]") || !strings.Contains(final, "[redacted opsbot-secret]") || !strings.HasSuffix(final, "done\n") {
			t.Errorf("the final answer does not show what was redacted, or lost its end:\n%s", final)
		}
	})
}

// The same through a platform's native streaming: the appends never carry
// a seed or the first half of one.
func TestNativeStreamRedactsSecretsSplitAcrossDeltas(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		conn := newStreamConn(webLimits)
		red := redact.New(redacttest.OwnSecrets...)
		r := render.NewRenderer(t.Context(), &redactedConn{Connector: conn, red: red}, render.NewEditBudget(0), nil, nil, connectors.Dest{Platform: "fake", Channel: "C1", Thread: "T1"})
		for _, c := range redacttest.Chunks() {
			r.Write(c)
			time.Sleep(1200 * time.Millisecond)
			synctest.Wait()
		}
		r.Close(context.Background(), nil)
		conn.mu.Lock()
		defer conn.mu.Unlock()
		var shown []string
		for _, st := range conn.streams {
			shown = append(shown, st.text, st.final.Text)
		}
		if len(conn.calls) < 3 {
			t.Fatalf("the answer was not streamed: %q", conn.calls)
		}
		redacttest.AssertNoSecret(t, append(redacttest.Secrets(), halves()...), shown...)
	})
}

// A word the model stopped at for a tool call is shown while the tool
// runs: only a word that may still grow is held back.
func TestRendererShowsTheLastWordBeforeAToolCall(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		conn := newFakeConn(webLimits)
		r := render.NewRenderer(t.Context(), &redactedConn{Connector: conn, red: redact.New()}, render.NewEditBudget(0), nil, nil, connectors.Dest{Platform: "fake", Channel: "C1", Thread: "T1"})
		defer r.Close(context.Background(), nil)
		r.Write("Let me look at the filesystem")
		synctest.Wait()
		if got := conn.thread("T1"); len(got) != 1 || got[0].msg.Text != "Let me look at the " {
			t.Fatalf("shown %+v; want the text without its unfinished last word", got)
		}
		r.Status("running `df -h` on local…", false)
		time.Sleep(time.Second)
		synctest.Wait()
		if got := conn.thread("T1")[0].msg.Text; got != "Let me look at the filesystem" {
			t.Errorf("while the tool runs the answer shows %q", got)
		}
	})
}

// Every part of a message a person reads passes the redactor.
func TestRedactedConnRedactsEveryPart(t *testing.T) {
	t.Parallel()
	conn := newStreamConn(connectors.Limits{MaxText: 4000})
	rc := &redactedConn{Connector: conn, red: redact.New(redacttest.OwnSecrets...)}
	out := redacttest.Output()
	m := connectors.Message{Text: out, Context: out, Fields: []connectors.Field{{Title: out, Value: out}},
		Buttons: []connectors.Button{{ActionID: "a", Value: "v", Label: redacttest.WebAPIKey}},
		Tasks:   []connectors.Task{{ID: "t1", Title: out, Details: out, Output: out}}}
	ctx := context.Background()
	ref, _ := rc.Post(ctx, connectors.Dest{Channel: "C", Thread: "T"}, m)
	rc.Edit(ctx, ref, m)
	sref, _ := rc.StartStream(ctx, connectors.Dest{Channel: "C", Thread: "T"}, m)
	rc.AppendStream(ctx, sref, redacttest.AWSAccessKey)
	rc.StopStream(ctx, sref, m)
	conn.mu.Lock()
	defer conn.mu.Unlock()
	var seen []string
	for _, fm := range conn.fakeConn.msgs {
		b, _ := json.Marshal(fm.msg)
		seen = append(seen, string(b))
		seen = append(seen, fm.history...)
	}
	for _, st := range conn.streams {
		b, _ := json.Marshal(st.final)
		seen = append(seen, st.text, string(b))
	}
	redacttest.AssertNoSecret(t, redacttest.Secrets(), seen...)
	if m.Text != out {
		t.Error("redacting changed the caller's message")
	}
}

// seedFile writes the seeds where a command can print them.
func seedFile(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "leaky.txt")
	if err := os.WriteFile(path, []byte(redacttest.Output()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// startRedactedBot wires a bot as cmd/opsbot does: one redactor knowing
// opsbot's own secrets, behind every boundary; the real store, policy,
// gate and local runner.
func startRedactedBot(t *testing.T, conn *fakeConn, model agent.Provider) (*Bot, string) {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(context.Background(), store.Config{Path: filepath.Join(dir, "bot.db")})
	if err != nil {
		t.Fatal(err)
	}
	fleet, err := hosts.NewFleet(hosts.Config{})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policy.NewPolicy(policy.PolicyConfig{})
	if err != nil {
		t.Fatal(err)
	}
	red := redact.New(redacttest.OwnSecrets...)
	checker := approvals.FleetPolicy{Policy: pol, Inventory: fleet.Inventory}
	run := executor.Audited{Executor: executor.Settled{Executor: &executor.Fleet{Fleet: fleet, Redactor: red}, FollowUps: st.Approvals()}, Policy: checker, Audit: storeTrail{st}, Redactor: red}
	gate := approvals.NewGate(st.Approvals(), approvals.GateConfig{Approvers: []approvals.ApproverConfig{{Web: approvals.UserList{Users: []string{"alice", "bob"}}}}}, approvals.GateOptions{})
	guard := &approvals.Guard{Policy: checker, Approver: approvals.GateApprover{Gate: gate, Store: st.Approvals(), Platform: conn.Name()}, Exec: run}
	jobs := &hosts.Jobs{Store: st.Jobs(), Exec: run}
	d := depsFor(st)
	d.Guard, d.Gate, d.Jobs, d.Platforms = guard, gate, jobs, NewPlatforms(red, nil, conn)
	d.Hosts, d.Config = []agent.HostInfo{{Name: "local"}}, Config{DataDir: filepath.Join(dir, "data")}
	if model != nil {
		d.Agent = &agent.Agent{Provider: model, History: RedactedHistory{History: persist.History{Store: st}, Redactor: red},
			Notices: persist.Notices{Store: st}, Tools: agent.NewRegistry(&tools.RunCommand{Guard: guard})}
	}
	b, err := New(d)
	if err != nil {
		t.Fatal(err)
	}
	wiredBots.Store(b, wired{st: st, jobs: jobs})
	ctx, cancel := context.WithCancel(context.Background())
	b.Start(ctx)
	t.Cleanup(func() {
		cancel()
		b.Close()
		jobs.Close()
		fleet.Close()
		st.Close()
	})
	return b, filepath.Join(dir, "bot.db")
}

// dbBytes is the raw database: the file and its write-ahead log.
func dbBytes(t *testing.T, path string) string {
	t.Helper()
	var all []byte
	for _, p := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	return string(all)
}

// The seeds printed by `run local` and read by the agent's tool call:
// none reaches the thread, the model, or the database; the thread shows
// that something was redacted; every command is in the audit trail.
func TestSeededSecretsNeverLeaveTheBot(t *testing.T) {
	t.Parallel()
	conn := newFakeConn(webLimits)
	conn.name = "web"
	file := seedFile(t, t.TempDir())
	// The model reads the file, then "quotes" a secret back, split across
	// deltas, as an injected model might.
	m := &model{steps: []func(context.Context, agent.Request, func(agent.StreamEvent) bool){
		runLocal("cat " + file),
		func(_ context.Context, _ agent.Request, yield func(agent.StreamEvent) bool) {
			for _, d := range []string{"The key is ", redacttest.AWSAccessKey[:10], redacttest.AWSAccessKey[10:], " and ", redacttest.OpenAIKey[:12], redacttest.OpenAIKey[12:], " done."} {
				if !yield(agent.StreamEvent{Kind: agent.EventText, Text: d}) {
					return
				}
			}
			yield(agent.StreamEvent{Kind: agent.EventStop, StopReason: agent.StopEndTurn})
		},
	}}
	b, dbPath := startRedactedBot(t, conn, m)
	h := &harness{t: t, bot: b, conn: conn, st: storeOf(b)}

	h.say("alice", "t1", "run local cat "+file)
	h.eventually("the run's end", h.has("t1", "exit 0"))
	h.say("alice", "t2", "what is in that file?")
	h.eventually("the answer", h.has("t2", "done."))
	h.eventually("what ran", h.has("t2", "What ran"))

	var shown []string
	for _, th := range []string{"t1", "t2"} {
		shown = append(shown, shownTexts(conn, th)...)
	}
	all := append(redacttest.Secrets(), halves()...)
	redacttest.AssertNoSecret(t, redacttest.Secrets(), shown...)
	if !strings.Contains(strings.Join(shown, "\n"), "[redacted aws-access-key]") {
		t.Errorf("the thread does not show that a secret was redacted:%s", h.dump())
	}
	var sent []string
	for _, req := range m.requests() {
		b, _ := json.Marshal(req)
		sent = append(sent, string(b))
	}
	if len(sent) != 2 {
		t.Fatalf("the model was called %d times, want 2", len(sent))
	}
	redacttest.AssertNoSecret(t, all, sent...)
	redacttest.AssertNoSecret(t, redacttest.Secrets(), dbBytes(t, dbPath))
}

// runLocal is a model step asking to run command on local.
func runLocal(command string) func(context.Context, agent.Request, func(agent.StreamEvent) bool) {
	in, _ := json.Marshal(map[string]string{"target": "local", "command": command})
	return toolCall("run_command", string(in))
}

// Every command is audited, the allowed ones too: who asked, the host,
// the command, the policy's decision and the exit code.
func TestAllowedCommandsAreAudited(t *testing.T) {
	t.Parallel()
	conn := newFakeConn(webLimits)
	conn.name = "web"
	m := &model{steps: []func(context.Context, agent.Request, func(agent.StreamEvent) bool){runLocal("ls /nonexistent-opsbot-dir"), text("It failed.")}}
	b, _ := startRedactedBot(t, conn, m)
	h := &harness{t: t, bot: b, conn: conn, st: storeOf(b)}
	h.say("alice", "t1", "run local echo "+redacttest.GitHubToken)
	h.eventually("the run's end", h.has("t1", "exit 0"))
	h.say("bob", "t2", "try something")
	h.eventually("what ran", h.has("t2", "What ran"))

	trail, err := storeOf(b).Audit().AuditTrail(context.Background(), "host:local")
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Actor, Action string
		Command       string `json:"command"`
		Decision      string `json:"decision"`
		ExitCode      *int   `json:"exit_code"`
	}
	var rows []row
	var raw []string
	for _, e := range trail {
		r := row{Actor: e.Actor, Action: e.Action}
		json.Unmarshal(e.Detail, &r)
		rows = append(rows, r)
		raw = append(raw, string(e.Detail))
	}
	want := []struct{ actor, action, command, decision string }{
		{"web:alice", "command.start", "echo [redacted github-pat]", "allow"},
		{"web:alice", "command.end", "echo [redacted github-pat]", ""},
		{"web:bob", "command.start", "ls /nonexistent-opsbot-dir", "allow"},
		{"web:bob", "command.end", "ls /nonexistent-opsbot-dir", ""},
	}
	if len(rows) != len(want) {
		t.Fatalf("audit trail of host:local has %d entries, want %d: %+v", len(rows), len(want), rows)
	}
	for i, w := range want {
		r := rows[i]
		if r.Actor != w.actor || r.Action != w.action || r.Command != w.command || r.Decision != w.decision {
			t.Errorf("entry %d = %+v, want %+v", i, r, w)
		}
	}
	if rows[1].ExitCode == nil || *rows[1].ExitCode != 0 || rows[3].ExitCode == nil || *rows[3].ExitCode != 2 {
		t.Errorf("exit codes not recorded: %q", raw)
	}
	redacttest.AssertNoSecret(t, redacttest.Secrets(), raw...)
}

// A background job is audited in the name of the person who started it,
// as a command run at once is: the job outlives the turn, not its
// requester.
func TestJobsAreAuditedAsTheirRequester(t *testing.T) {
	t.Parallel()
	conn := newFakeConn(webLimits)
	conn.name = "web"
	b, _ := startRedactedBot(t, conn, nil)
	h := &harness{t: t, bot: b, conn: conn, st: storeOf(b)}
	h.say("alice", "t1", "run --bg local echo from-a-job")
	h.eventually("the job's end", h.has("t1", "succeeded"))
	trail, err := storeOf(b).Audit().AuditTrail(context.Background(), "host:local")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range trail {
		got = append(got, e.Actor+" "+e.Action)
	}
	want := []string{"web:alice command.start", "web:alice command.end"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("audit trail of the job: %q, want %q", got, want)
	}
}
