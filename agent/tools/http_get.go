package tools

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/policy"
)

//go:embed http_get.md
var httpGetDescription string

// HTTPGet is `http_get`: one GET from the bot's host to a destination the
// policy lets network clients reach without a person (policy.egress_allow),
// run as curl through the guard, in the sandbox that lets it connect there
// only. It never asks people: a destination that would need an approval
// is refused, and the model may ask for it with run_command.
type HTTPGet struct{ Guard *approvals.Guard }

var (
	_ agent.Tool       = (*HTTPGet)(nil)
	_ agent.Concurrent = (*HTTPGet)(nil)
)

// Spec describes the tool.
func (*HTTPGet) Spec() agent.ToolSpec {
	return spec("http_get", httpGetDescription,
		`{"type":"object","properties":{"url":{"type":"string","description":"http:// or https:// URL"}},"required":["url"]}`)
}

// Describe is the status line.
func (*HTTPGet) Describe(call agent.ToolCall) string {
	var in struct{ URL string }
	_ = decodeInput(call, &in)
	return fmt.Sprintf("fetching %s…", in.URL)
}

// Concurrent is true: http_get asks no one.
func (*HTTPGet) Concurrent(agent.ToolCall) bool { return true }

// Call checks the destination with the policy and fetches it.
func (t *HTTPGet) Call(ctx context.Context, call agent.ToolCall) agent.ToolResult {
	_, command, err := httpGetCommand(call)
	if err != nil {
		return agent.Errorf("%v", err)
	}
	if d := t.Guard.Decide([]string{hosts.LocalHost}, command); d.Action != policy.Allow {
		return agent.Errorf("not fetched: http_get reaches only the destinations the policy allows without a person (policy.egress_allow): %s",
			strings.Join(d.Reasons, "; "))
	}
	return hostRead{guard: t.Guard, build: httpGetCommand}.run(ctx, call)
}

// httpGetCommand is the curl command of a call: the status line and the
// headers (-i), no redirect followed (a redirect could lead anywhere), no
// URL globbing (-g); the URL is http or https, checked here.
func httpGetCommand(call agent.ToolCall) (target, command string, err error) {
	var in struct {
		URL string `json:"url"`
	}
	if err := decodeInput(call, &in); err != nil {
		return "", "", err
	}
	u, err := url.Parse(strings.TrimSpace(in.URL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return "", "", errors.New("http_get needs an http:// or https:// URL with a host and no user or password")
	}
	word, err := quote(u.String())
	if err != nil {
		return "", "", err
	}
	return hosts.LocalHost, "curl -sS -i -g --max-time 20 " + word, nil
}
