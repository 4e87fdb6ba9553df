package bot

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/mcp"
	"github.com/opsbot/opsbot/connectors/slack"
	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

// metricsServer is a real MCP server over streamable HTTP with two
// read-only tools: query_prometheus answers, query_loki fails.
func metricsServer(t *testing.T) string {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "metrics", Version: "1"}, nil)
	ro := &sdk.ToolAnnotations{ReadOnlyHint: true}
	sdk.AddTool(srv, &sdk.Tool{Name: "query_prometheus", Annotations: ro},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "p99 latency 2.3s"}}}, nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "query_loki", Annotations: ro},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return nil, nil, errors.New("loki is down")
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

// callTool is a model step that calls tool name with input.
func callTool(id, name, input string) func(context.Context, agent.Request, func(agent.StreamEvent) bool) {
	return func(_ context.Context, _ agent.Request, yield func(agent.StreamEvent) bool) {
		if !yield(agent.StreamEvent{Kind: agent.EventToolCall, ToolCall: agent.Block{Type: agent.BlockToolUse, ID: id, Name: name, Input: []byte(input)}}) {
			return
		}
		yield(agent.StreamEvent{Kind: agent.EventStop, StopReason: agent.StopToolUse})
	}
}

// slackTestBot is a test bot on a Slack connector talking to the fake
// over Socket Mode, connected.
func slackTestBot(t *testing.T, opt botOptions) *slackfake.Server {
	t.Helper()
	fake := slackfake.New()
	t.Cleanup(fake.Close)
	conn, err := slack.New(slack.Config{BotToken: slackfake.BotToken, AppToken: slackfake.AppToken, APIURL: fake.URL}, slack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, stop := startBot(t, t.TempDir(), conn, opt)
	t.Cleanup(stop)
	connectSlack(t, fake, conn, b)
	return fake
}

// connectSlack starts conn's Socket Mode connection to fake, its events
// handled by b, until the test ends, and waits until it is open.
func connectSlack(t *testing.T, fake *slackfake.Server, conn *slack.Connector, b *Bot) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- conn.Start(ctx, b.Handle) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-fake.Connected():
	case <-time.After(slackWait):
		t.Fatal("the connector never opened a Socket Mode connection")
	}
}

// cardsOf are the task cards of a thread's messages, by id (a later
// message's card of the same id wins), and whether none streams still.
func cardsOf(s *slackfake.Server, channel, thread string) (map[string]slackfake.Task, bool) {
	cards := map[string]slackfake.Task{}
	msgs := s.Thread(channel, thread)
	for _, m := range msgs {
		for _, tk := range m.Tasks {
			cards[tk.ID] = tk
		}
	}
	return cards, !slices.ContainsFunc(msgs, func(m slackfake.Message) bool { return m.Streaming })
}

// An agent's turn on Slack that calls MCP tools and runs commands: every
// call has its task card in the answer's stream, ending complete or error
// as the call did — an MCP call like a command (the same tool events,
// through the redacting connector's UpdateTask).
func TestSlackMCPCallsAndCommandsAreTaskCards(t *testing.T) {
	t.Parallel()
	servers := mcp.Start(mcp.Config{Servers: map[string]mcp.ServerConfig{"metrics": {Type: "http", URL: metricsServer(t),
		Tools: map[string]mcp.Decision{"query_prometheus": mcp.Allow, "query_loki": mcp.Allow}}}}, mcp.Options{})
	t.Cleanup(servers.Close)
	servers.Settle(t.Context())
	m := &model{steps: []func(context.Context, agent.Request, func(agent.StreamEvent) bool){
		callTool("call-prom", mcp.ToolName("metrics", "query_prometheus"), `{}`),
		callTool("call-loki", mcp.ToolName("metrics", "query_loki"), `{}`),
		callTool("call-ok", "run_command", `{"target":"local","command":"echo up"}`),
		callTool("call-fail", "run_command", `{"target":"local","command":"exit 3"}`),
		text("p99 is 2.3 s; Loki did not answer."),
	}}
	fake := slackTestBot(t, botOptions{model: m, toolSources: []agent.ToolSource{servers}})
	root := fake.Mention("C0OPS", "U0ALICE", "", "how slow is web")
	want := map[string]string{"call-prom": "complete", "call-loki": "error", "call-ok": "complete", "call-fail": "error"}
	var cards map[string]slackfake.Task
	ended := fake.WaitFor(slackWait, func(s *slackfake.Server) bool {
		var still bool
		cards, still = cardsOf(s, "C0OPS", root.Thread)
		for id, st := range want {
			if cards[id].Status != st {
				return false
			}
		}
		return still
	})
	if !ended {
		t.Fatalf("cards %+v; want %v, the answer ended:\n%s", cards, want, fake.ThreadText("C0OPS", root.Thread))
	}
	if c := cards["call-prom"]; c.Title != "calling "+mcp.ToolName("metrics", "query_prometheus") || c.Details == "" {
		t.Errorf("the MCP call's card %+v; want the title it started with and how the call went", c)
	}
	for _, m := range fake.StoppedOpen() {
		t.Errorf("message %s stopped with cards still open: %+v", m.TS, m.OpenTasks())
	}
	if c := cards["call-fail"]; c.Status != "error" || c.Title != "`exit 3` on local" || c.Output == "" {
		t.Errorf("the failed command's card %+v; want the command, host and exit code", c)
	}
}
