package mcp

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/approvals/redact"
	"github.com/opsbot/opsbot/policy"
	"github.com/opsbot/opsbot/store"
)

const token = "tok-3f9a1c7e5b2d4e6f8a0b"

// transports are the two kinds of server, the same test server behind
// each; deleted counts the HTTP server's runs of delete_all.
func transports(t *testing.T, deleted *atomic.Int32) map[string]ServerConfig {
	ts := httpTestServer(t, token, deleted)
	return map[string]ServerConfig{
		"stdio": stdioConfig(t),
		"http":  {Type: TypeHTTP, URL: ts.URL, Headers: map[string]string{"Authorization": "Bearer " + token}},
	}
}

// trail is an Auditor that keeps what it is told.
type trail struct {
	mu      sync.Mutex
	entries []AuditEntry
}

func (a *trail) Audit(_ context.Context, e AuditEntry) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.entries = append(a.entries, e)
	return nil
}

func (a *trail) actions() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, e := range a.entries {
		out = append(out, e.Action)
	}
	return out
}

func (a *trail) last() map[string]any {
	a.mu.Lock()
	defer a.mu.Unlock()
	var d map[string]any
	json.Unmarshal(a.entries[len(a.entries)-1].Detail, &d)
	return d
}

var alice = agent.SessionInfo{Requester: "alice", Platform: "web", Channel: "web"}

// call calls the model's tool name with input as alice would.
func call(t *testing.T, s *Servers, name, input string, emit func(agent.Event)) agent.ToolResult {
	t.Helper()
	tool, ok := s.Tool(name)
	if !ok {
		t.Fatalf("no tool %s; offered: %v", name, names(s))
	}
	if emit == nil {
		emit = func(agent.Event) {}
	}
	return tool.Call(t.Context(), agent.ToolCall{ID: "c1", Name: name, Input: json.RawMessage(input), Session: alice, Emit: emit})
}

func names(s *Servers) []string {
	var out []string
	for _, t := range s.Tools() {
		out = append(out, t.Spec().Name)
	}
	return out
}

// An allowed tool runs and is audited; a denied one is not offered, and a
// call of it anyway is refused without reaching the server. Both over
// stdio and HTTP.
func TestAllowRunsDenyIsNeverOffered(t *testing.T) {
	var deleted atomic.Int32
	for kind, sc := range transports(t, &deleted) {
		t.Run(kind, func(t *testing.T) {
			sc.Default = Deny
			sc.Tools = map[string]Decision{"echo": Allow, "delete_all": Deny}
			audit := &trail{}
			s, changed := watch(t, Config{Servers: map[string]ServerConfig{"ops": sc}}, Options{Audit: audit})
			up(t, s, changed)
			reg := agent.NewRegistry()
			reg.AddSource(s)
			specs := reg.Specs()
			if len(specs) != 1 || specs[0].Name != "ops__echo" || !strings.Contains(string(specs[0].InputSchema), `"text"`) {
				t.Errorf("offered %+v, want only ops__echo with its schema (default deny, delete_all deny)", specs)
			}
			if res := reg.Dispatch(t.Context(), agent.ToolCall{Name: "ops__delete_all", Session: alice, Emit: func(agent.Event) {}}); !strings.HasPrefix(res.Content, "refused:") {
				t.Errorf("the registry dispatched a denied tool: %+v", res)
			}
			res := call(t, s, "ops__echo", `{"text":"hello <b>"}`, nil)
			if res.IsError || res.Content != "hello <b>" {
				t.Errorf("echo: %+v", res)
			}
			if got := audit.actions(); !slices.Equal(got, []string{ActionRefused, ActionStart, ActionEnd}) {
				t.Errorf("audited %v", got)
			}
			if d := audit.last(); d["decision"] != "allow" || d["tool"] != "echo" || d["result_bytes"] != float64(len("hello <b>")) {
				t.Errorf("audit detail %v", d)
			}
			res = call(t, s, "ops__delete_all", `{}`, nil)
			if !res.IsError || !strings.Contains(res.Content, "refused: mcp.servers.ops.tools.delete_all is deny") {
				t.Errorf("delete_all called anyway: %+v", res)
			}
			if got := audit.actions(); got[len(got)-1] != ActionRefused {
				t.Errorf("the refusal is not audited: %v", got)
			}
		})
	}
	if deleted.Load() != 0 {
		t.Errorf("delete_all ran %d times on the HTTP server", deleted.Load())
	}
}

// openGate is a real Gate on a real database: bob and carol may approve
// on the web chat, the requester may not approve their own request.
func openGate(t *testing.T) (*approvals.Gate, *store.Store) {
	t.Helper()
	st, err := store.Open(t.Context(), store.Config{Path: filepath.Join(t.TempDir(), "opsbot.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	gate := approvals.NewGate(st.Approvals(), approvals.GateConfig{Approvers: []approvals.ApproverConfig{
		{Web: approvals.UserList{Users: []string{"alice", "bob"}}}}}, approvals.GateOptions{})
	return gate, st
}

// An approve tool waits for another person: the requester's own click is
// refused and runs nothing; bob's runs it. The request binds the server,
// the tool and the canonical arguments, and the card shows the hints.
func TestApproveWaitsForAnotherPerson(t *testing.T) {
	for kind, sc := range transports(t, nil) {
		t.Run(kind, func(t *testing.T) {
			gate, st := openGate(t)
			sc.Tools = map[string]Decision{"echo": Approve}
			audit := &trail{}
			s, changed := watch(t, Config{Servers: map[string]ServerConfig{"ops": sc}},
				Options{Approver: approvals.GateApprover{Gate: gate, Store: st.Approvals()}, FollowUps: st.Approvals(), Audit: audit})
			up(t, s, changed)
			pending := make(chan *agent.PendingApproval, 1)
			done := make(chan agent.ToolResult, 1)
			go func() {
				done <- call(t, s, "ops__echo", `{ "text" : "hi\u200b" }`, func(e agent.Event) {
					if e.Kind == agent.ApprovalPending {
						pending <- e.Approval
					}
				})
			}()
			p := <-pending
			if p.Target != "mcp:ops" || p.Command != "echo {\"text\":\"hi\u200b\"}" {
				t.Errorf("the request is for %q on %q", p.Command, p.Target)
			}
			if !slices.ContainsFunc(p.Reasons, func(r string) bool { return strings.Contains(r, "hints (shown, not used to decide): read-only") }) {
				t.Errorf("the card does not show the server's hints: %q", p.Reasons)
			}
			self, err := gate.Vote(t.Context(), p.ID, approvals.Person{Platform: "web", ID: "alice"}, approvals.VoteApprove)
			if err != nil || self.Status != approvals.VoteRefused {
				t.Fatalf("alice approving her own call: %+v, %v", self, err)
			}
			select {
			case res := <-done:
				t.Fatalf("the call ran on the requester's own approval: %+v", res)
			default:
			}
			card := approvals.NewCard(self.Approval, policy.DisplayOptions{})
			if !strings.Contains(card.Text(), `\u200b`) && len(card.Command.Hidden) == 0 {
				t.Errorf("the card does not make the invisible character visible:\n%s", card.Text())
			}
			if _, err := gate.Vote(t.Context(), p.ID, approvals.Person{Platform: "web", ID: "bob"}, approvals.VoteApprove); err != nil {
				t.Fatal(err)
			}
			if res := <-done; res.IsError || res.Content != "hi\u200b" {
				t.Errorf("after bob's approval: %+v", res)
			}
			if d := audit.last(); d["decision"] != "approve" || audit.actions()[0] != ActionStart {
				t.Errorf("audit %v %v", audit.actions(), d)
			}
		})
	}
}

// refuser is an Approver that records the request and denies it.
type refuser struct{ asked chan approvals.CommandRequest }

func (r refuser) Approve(_ context.Context, req approvals.CommandRequest, pending func(approvals.Pending)) (approvals.Outcome, error) {
	r.asked <- req
	return approvals.Outcome{State: "denied", DecidedBy: "@bob"}, nil
}

// Under default: allow, a tool that appears after start (the server's
// notifications/tools/list_changed) needs approval until the config names
// it.
func TestLateToolNeedsApprovalUnderDefaultAllow(t *testing.T) {
	for kind, sc := range transports(t, nil) {
		t.Run(kind, func(t *testing.T) {
			sc.Default = Allow
			asked := make(chan approvals.CommandRequest, 1)
			s, changed := watch(t, Config{Servers: map[string]ServerConfig{"ops": sc}}, Options{Approver: refuser{asked}})
			up(t, s, changed)
			if res := call(t, s, "ops__add_tool", `{"name":"late"}`, nil); res.IsError {
				t.Fatalf("add_tool: %+v", res)
			}
			waitFor(t, s, changed, "listed the late tool", func([]Status) bool { return slices.Contains(names(s), "ops__late") })
			res := call(t, s, "ops__late", `{}`, nil)
			req := <-asked
			if !res.IsError || !strings.Contains(res.Content, "not called: the approval request was denied by @bob") {
				t.Errorf("the late tool: %+v", res)
			}
			if !strings.Contains(req.Reasons[0], "appeared on ops after opsbot connected") {
				t.Errorf("reasons %q", req.Reasons)
			}
			if res := call(t, s, "ops__echo", `{"text":"still allowed"}`, nil); res.IsError {
				t.Errorf("a tool of the first listing: %+v", res)
			}
		})
	}
}

// A 10 MB result is cut to max_output, and the result says so.
func TestBigResultIsCut(t *testing.T) {
	for kind, sc := range transports(t, nil) {
		t.Run(kind, func(t *testing.T) {
			// Ten megabytes through JSON-RPC under -race on a loaded
			// machine take tens of seconds: the cut is tested here, not
			// the time limit.
			sc.Default, sc.MaxOutput, sc.Timeout = Allow, 64<<10, 5*time.Minute
			audit := &trail{}
			s, changed := watch(t, Config{Servers: map[string]ServerConfig{"ops": sc}}, Options{Audit: audit})
			up(t, s, changed)
			res := call(t, s, "ops__big", `{"bytes":10485760}`, nil)
			if res.IsError || len(res.Content) > 64<<10+200 || !strings.Contains(res.Content, "[cut: the result was 10.49 MB; only its first 65.5 KB are shown (mcp.servers.ops.max_output)]") {
				t.Errorf("%d bytes: %q", len(res.Content), res.Content[max(0, len(res.Content)-200):])
			}
			if d := audit.last(); d["result_bytes"] != float64(10485760) || d["cut"] != true {
				t.Errorf("audit %v", d)
			}
		})
	}
}

// A hung call returns at its timeout, and the server stays usable.
func TestHungCallReturnsAtItsTimeout(t *testing.T) {
	for kind, sc := range transports(t, nil) {
		t.Run(kind, func(t *testing.T) {
			sc.Default, sc.Timeout = Allow, time.Second
			s, changed := watch(t, Config{Servers: map[string]ServerConfig{"ops": sc}}, Options{})
			up(t, s, changed)
			start := time.Now()
			res := call(t, s, "ops__hang", `{}`, nil)
			if took := time.Since(start); took < time.Second || !res.IsError ||
				!strings.Contains(res.Content, "no answer from hang on ops within 1s (mcp.servers.ops.timeout)") {
				t.Errorf("after %s: %+v", took, res)
			}
			if res := call(t, s, "ops__echo", `{"text":"after"}`, nil); res.Content != "after" {
				t.Errorf("the server after a hung call: %+v", res)
			}
		})
	}
}

// A stdio server's environment is env alone: none of opsbot's secrets,
// not even its PATH. Its results are redacted.
func TestStdioServerGetsNoSecret(t *testing.T) {
	secret := "sk-test-Zq8xT3vLr9Wm2Kp7Yb4N"
	t.Setenv("OPSBOT_TEST_API_KEY", secret)
	sc := stdioConfig(t)
	sc.Default = Allow
	s, changed := watch(t, Config{Servers: map[string]ServerConfig{"k8s": sc}}, Options{Redactor: redact.New(secret)})
	up(t, s, changed)
	res := call(t, s, "k8s__env", `{}`, nil)
	got := strings.Split(res.Content, "\n")
	slices.Sort(got)
	if want := []string{"KUBECONFIG=/etc/opsbot/kubeconfig", serverEnv + "=stdio"}; !slices.Equal(got, want) {
		t.Errorf("the server's environment is %q, want %q", got, want)
	}
	res = call(t, s, "k8s__echo", `{"text":"key `+secret+`"}`, nil)
	if strings.Contains(res.Content, secret) {
		t.Errorf("a secret in a result reached the model: %q", res.Content)
	}
}

// A server that is down answers "unavailable" at once; its state says
// why.
func TestDownServerAnswersUnavailable(t *testing.T) {
	ts := httpTestServer(t, token, nil)
	cfg := Config{Servers: map[string]ServerConfig{
		"gone": {Type: TypeStdio, Command: "/nonexistent/mcp-server", Default: Allow},
		"web":  {Type: TypeHTTP, URL: ts.URL, Headers: map[string]string{"Authorization": "Bearer " + token}, Default: Allow},
	}}
	s, changed := watch(t, cfg, Options{PingEvery: 20 * time.Millisecond})
	waitFor(t, s, changed, "up and down", func(st []Status) bool {
		return !st[0].Up && strings.Contains(st[0].Down, "could not connect") && st[1].Up
	})
	ts.CloseClientConnections()
	ts.Close()
	waitFor(t, s, changed, "web down", func(st []Status) bool { return !st[1].Up })
	res := call(t, s, "web__echo", `{"text":"x"}`, nil)
	if !res.IsError || !strings.HasPrefix(res.Content, "unavailable: MCP server web is down") {
		t.Errorf("a call to a down server: %+v", res)
	}
}

// Closing the servers ends a stdio server's whole process group: a child
// it started and left behind dies with it.
func TestCloseEndsTheStdioServersProcessGroup(t *testing.T) {
	sc := stdioConfig(t)
	sc.Default = Allow
	s, changed := watch(t, Config{Servers: map[string]ServerConfig{"ops": sc}}, Options{})
	up(t, s, changed)
	res := call(t, s, "ops__spawn", `{}`, nil)
	pid, err := strconv.Atoi(res.Content)
	if err != nil {
		t.Fatalf("spawn: %+v", res)
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatalf("the child %d is gone before Close: %v", pid, err)
	}
	defer unix.Close(fd)
	s.Close()
	// The pidfd turns readable when the process ends.
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 30_000)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n != 1 {
			t.Fatalf("the server's child %d outlived Close (poll: %d, %v)", pid, n, err)
		}
		return
	}
}

// The config decides; a late tool is approve at most, a denied default
// stays deny; sizes read with their units.
func TestDecideAndSizes(t *testing.T) {
	t.Parallel()
	cfg := Config{Servers: map[string]ServerConfig{
		"open":   {Default: Allow, Tools: map[string]Decision{"rm": Deny, "named": Allow}},
		"closed": {Default: Deny},
	}}
	tests := []struct {
		server, tool string
		late         bool
		want         Decision
	}{
		{"open", "rm", false, Deny}, {"open", "other", false, Allow}, {"open", "other", true, Approve},
		{"open", "named", true, Allow}, {"closed", "x", true, Deny}, {"nope", "x", false, Deny},
	}
	for _, tt := range tests {
		if got := cfg.Decide(tt.server, tt.tool, tt.late).Decision; got != tt.want {
			t.Errorf("%s/%s late=%v: %s, want %s", tt.server, tt.tool, tt.late, got, tt.want)
		}
	}
	for text, want := range map[string]ByteSize{"65536": 65536, "64KiB": 64 << 10, "1MiB": 1 << 20, "500KB": 500_000, "2 MiB": 2 << 20, "lots": notASize} {
		var b ByteSize
		if b.UnmarshalText([]byte(text)); b != want {
			t.Errorf("%q read as %d, want %d", text, b, want)
		}
	}
}
