package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// serverEnv makes the test binary an MCP server on stdio (TestMain): the
// stdio tests start it as their server, with only this variable set.
const serverEnv = "OPSBOT_MCP_TESTSERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) == "stdio" {
		if err := newTestServer(nil).Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type textIn struct {
	Text string `json:"text"`
}

type sizeIn struct {
	Bytes int `json:"bytes"`
}

type nameIn struct {
	Name string `json:"name"`
}

func textResult(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

// newTestServer is the MCP server of the tests, the same over stdio and
// HTTP: echo (read-only), env, big, hang, add_tool (a tool appears
// later), and delete_all, which counts its runs in deleted.
func newTestServer(deleted *atomic.Int32) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "testserver", Version: "1"}, &sdk.ServerOptions{Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{ListChanged: true}}})
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Says the text back.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, in textIn) (*sdk.CallToolResult, any, error) {
			return textResult(in.Text), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "env", Description: "Lists its environment."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return textResult(strings.Join(os.Environ(), "\n")), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "big", Description: "Answers with that many bytes."},
		func(_ context.Context, _ *sdk.CallToolRequest, in sizeIn) (*sdk.CallToolResult, any, error) {
			return textResult(strings.Repeat("x", in.Bytes)), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "hang", Description: "Never answers."},
		func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			<-ctx.Done()
			return nil, nil, ctx.Err()
		})
	sdk.AddTool(s, &sdk.Tool{Name: "add_tool", Description: "Adds a tool of that name."},
		func(_ context.Context, _ *sdk.CallToolRequest, in nameIn) (*sdk.CallToolResult, any, error) {
			sdk.AddTool(s, &sdk.Tool{Name: in.Name, Description: "A tool added late."},
				func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
					return textResult("late tool ran"), nil, nil
				})
			return textResult("added " + in.Name), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "spawn", Description: "Starts a child that sleeps; answers its pid."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			child := exec.Command("/bin/sleep", "600")
			if err := child.Start(); err != nil {
				return nil, nil, err
			}
			return textResult(strconv.Itoa(child.Process.Pid)), nil, nil
		})
	destructive := true
	sdk.AddTool(s, &sdk.Tool{Name: "delete_all", Description: "Deletes everything.", Annotations: &sdk.ToolAnnotations{DestructiveHint: &destructive}},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			if deleted != nil {
				deleted.Add(1)
			}
			return textResult("deleted everything"), nil, nil
		})
	return s
}

// httpTestServer serves newTestServer over streamable HTTP, refusing a
// request without the token.
func httpTestServer(t *testing.T, token string, deleted *atomic.Int32) *httptest.Server {
	t.Helper()
	srv := newTestServer(deleted)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// stdioConfig is a server entry that starts this test binary as a stdio
// server.
func stdioConfig(t *testing.T) ServerConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return ServerConfig{Type: TypeStdio, Command: exe, Env: map[string]string{serverEnv: "stdio", "KUBECONFIG": "/etc/opsbot/kubeconfig"}}
}

// watch starts the servers of cfg and returns them with a channel told of
// every change; the servers close with the test.
func watch(t *testing.T, cfg Config, opt Options) (*Servers, chan string) {
	t.Helper()
	changed := make(chan string, 64)
	opt.OnChange = func(server string) {
		select {
		case changed <- server:
		default:
		}
	}
	s := Start(cfg, opt)
	t.Cleanup(s.Close)
	return s, changed
}

// waitFor waits on the servers' changes until ok holds.
func waitFor(t *testing.T, s *Servers, changed chan string, what string, ok func([]Status) bool) {
	t.Helper()
	// A bound, not a wait: a change comes in milliseconds; two minutes
	// leave room for a cold, loaded machine.
	limit := time.NewTimer(2 * time.Minute)
	defer limit.Stop()
	for !ok(s.Status()) {
		select {
		case <-changed:
		case <-limit.C:
			t.Fatalf("never %s: %+v", what, s.Status())
		}
	}
}

// up waits until every server is connected.
func up(t *testing.T, s *Servers, changed chan string) {
	t.Helper()
	waitFor(t, s, changed, "connected", func(st []Status) bool {
		for _, x := range st {
			if !x.Up {
				return false
			}
		}
		return true
	})
}
