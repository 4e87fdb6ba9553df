package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const mcpToken = "tok-grafana-7c1e9a3f5b2d"

// grafanaLike is a real streamable-HTTP MCP server with three tools like
// Grafana's, behind a bearer token.
func grafanaLike(t *testing.T) string {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "grafana-like", Version: "1"}, nil)
	yes := true
	tools := []*sdk.Tool{
		{Name: "query_prometheus", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		{Name: "create_annotation"},
		{Name: "delete_dashboard", Annotations: &sdk.ToolAnnotations{DestructiveHint: &yes}},
	}
	for _, tool := range tools {
		sdk.AddTool(srv, tool, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil, nil
		})
	}
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+mcpToken {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

func mcpConfigFile(t *testing.T, url string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "opsbot.yaml")
	err := os.WriteFile(path, []byte(`
mcp:
  servers:
    grafana:
      type: http
      url: `+url+`
      headers: {Authorization: "Bearer `+mcpToken+`"}
      default: approve
      tools:
        query_prometheus: allow
        create_annotation: approve
        delete_dashboard: deny
    k8s:
      type: stdio
      command: /nonexistent/kubernetes-mcp-server
      default: allow
`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// opsbot policy check --mcp SERVER/TOOL prints the config's decision with
// the exit codes of a command's.
func TestPolicyCheckMCP(t *testing.T) {
	t.Parallel()
	cfg := mcpConfigFile(t, "http://127.0.0.1:1/mcp")
	tests := []struct {
		tool       string
		code       int
		first, has string
	}{
		{"grafana/query_prometheus", 0, "allow", "mcp.servers.grafana.tools.query_prometheus is allow"},
		{"grafana/create_annotation", exitApprove, "approve", "tools.create_annotation is approve"},
		{"grafana/delete_dashboard", exitDeny, "deny", "tools.delete_dashboard is deny"},
		{"grafana/anything_else", exitApprove, "approve", "mcp.servers.grafana.default is approve"},
		{"k8s/pods_list", 0, "allow", "if pods_list appears on k8s after opsbot connected: approve"},
		{"nope/x", exitUsage, "", ""},
		{"grafana", exitUsage, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			t.Parallel()
			code, out, stderr := runOpsbot(t, "policy", "check", "--config", cfg, "--mcp", tt.tool)
			first, _, _ := strings.Cut(out, "\n")
			if code != tt.code || first != tt.first || !strings.Contains(out, tt.has) {
				t.Errorf("exit %d (want %d), output %q, stderr %q", code, tt.code, out, stderr)
			}
		})
	}
}

// opsbot mcp list connects to each server and lists its tools with the
// decisions; a server that is down is named, with why, and exits 1.
func TestMCPListShowsDecisions(t *testing.T) {
	t.Parallel()
	cfg := mcpConfigFile(t, grafanaLike(t)+"/mcp")
	code, out, stderr := runOpsbot(t, "mcp", "list", "--config", cfg)
	for _, want := range []string{
		"grafana (http ", "): up, 3 tools",
		"grafana__create_annotation  approve  mcp.servers.grafana.tools.create_annotation is approve",
		"grafana__delete_dashboard   deny",
		"hints: destructive",
		"grafana__query_prometheus   allow", "hints: read-only",
		"k8s (stdio /nonexistent/kubernetes-mcp-server): down: could not connect to /nonexistent/kubernetes-mcp-server: no such file or directory",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("mcp list lacks %q:\n%s", want, out)
		}
	}
	if code != 1 || strings.Contains(out+stderr, mcpToken) {
		t.Errorf("exit %d (want 1: k8s is down); stderr %q", code, stderr)
	}
}

// config check says what is wrong with an mcp block, key by key.
func TestConfigCheckMCP(t *testing.T) {
	t.Parallel()
	_, err := parseConfig("opsbot.yaml", []byte(`
mcp:
  servers:
    Bad__name:
      type: stdoi
    web:
      type: http
      url: ftp://example.com/mcp
      max_output: 12 parsecs
      command: /bin/x
    k8s:
      type: stdio
      default: maybe
      tools: {pods_delete: nope}
`), func(string) (string, bool) { return "", false })
	if err == nil {
		t.Fatal("the config is accepted")
	}
	for _, want := range []string{
		"opsbot.yaml:4: mcp.servers.Bad__name: a server's name is up to 30 lower-case letters",
		"opsbot.yaml:5: mcp.servers.Bad__name.type: \"stdoi\" is not a server type: use stdio or http",
		"opsbot.yaml:8: mcp.servers.web.url: \"ftp://example.com/mcp\" is not an http:// or https:// address",
		"opsbot.yaml:9: mcp.servers.web.max_output: not a size: write e.g. 65536, 64KiB or 1MiB",
		"opsbot.yaml:10: mcp.servers.web.command: command and args are for type: stdio",
		"opsbot.yaml:11: mcp.servers.k8s.command: a stdio server needs the command that starts it",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("config check lacks %q:\n%v", want, err)
		}
	}
	for _, want := range []string{"mcp.servers.k8s.default: \"maybe\" is not a decision", "mcp.servers.k8s.tools.pods_delete: \"nope\" is not a decision"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("config check lacks %q:\n%v", want, err)
		}
	}
}

// An MCP server's header values are secrets: the redactor hides them.
func TestMCPHeadersAreSecrets(t *testing.T) {
	t.Parallel()
	cfg, err := parseConfig("opsbot.yaml", []byte(`
mcp:
  servers:
    grafana:
      type: http
      url: https://grafana-mcp.internal/mcp
      headers: {Authorization: "Bearer ${GRAFANA_MCP_TOKEN}"}
`), func(n string) (string, bool) { return "glsa_Zx81kPq02LmVb7TnYw4R", n == "GRAFANA_MCP_TOKEN" })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(cfg.secrets(), "glsa_Zx81kPq02LmVb7TnYw4R") {
		t.Error("the header's token is not among the secrets")
	}
	if got := cfg.redactor().String("token glsa_Zx81kPq02LmVb7TnYw4R"); strings.Contains(got, "glsa_Zx81") {
		t.Errorf("redacted: %q", got)
	}
}

// The prompt lists each server and what needs approval.
func TestMCPPrompt(t *testing.T) {
	t.Parallel()
	cfg, err := parseConfig("opsbot.yaml", []byte(`
mcp:
  servers:
    grafana:
      type: http
      url: https://grafana-mcp.internal/mcp
      tools: {query_prometheus: allow, create_annotation: approve, delete_dashboard: deny}
    k8s: {type: stdio, command: /usr/local/bin/kubernetes-mcp-server, default: allow}
`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	p := mcpPrompt(cfg.MCP)
	for _, want := range []string{
		"- grafana: runs at once: query_prometheus; waits for approval: create_annotation; refused (not offered): delete_dashboard; any other tool: waits for approval.",
		"- k8s: any other tool: runs at once.",
		"A tool a server adds after opsbot connected waits for approval",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, p)
		}
	}
	if mcpPrompt(defaultConfig().MCP) != "" {
		t.Error("a prompt about MCP servers with none configured")
	}
}

// The agent is offered the allowed and approvable tools of an MCP server
// as SERVER__TOOL, never a denied one, and its prompt lists the server:
// opsbot ask against the fake model and a real streamable-HTTP server.
func TestAskOffersMCPTools(t *testing.T) {
	t.Parallel()
	cfg := mcpConfigFile(t, grafanaLike(t)+"/mcp")
	llm := &fakeLLM{t: t, say: []string{"hello"}}
	cmd := askCmd(t, llm, "what is up?")
	cmd.Args = []string{cmd.Args[0], "ask", "--config", cfg, "what is up?"}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ask: %v\n%s", err, out)
	}
	llm.mu.Lock()
	req := llm.requests[0]
	llm.mu.Unlock()
	var tools []string
	for _, tool := range req.Tools {
		tools = append(tools, tool.Function.Name)
	}
	for _, want := range []string{"grafana__query_prometheus", "grafana__create_annotation", "run_command"} {
		if !slices.Contains(tools, want) {
			t.Errorf("the model is not offered %s: %v", want, tools)
		}
	}
	if slices.Contains(tools, "grafana__delete_dashboard") {
		t.Errorf("the model is offered a denied tool: %v", tools)
	}
	system, _ := req.Messages[0].Content.(string)
	if !strings.Contains(system, "- grafana: runs at once: query_prometheus; waits for approval: create_annotation; refused (not offered): delete_dashboard") {
		t.Errorf("the prompt does not list the MCP server:\n%s", system)
	}
}
