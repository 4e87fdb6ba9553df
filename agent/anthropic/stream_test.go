package anthropic

import (
	"testing"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/conformance"
	"github.com/opsbot/opsbot/agent/internal/testfake"
)

// TestStream plays what only the Messages API answers; the rest is
// TestConformance's.
func TestStream(t *testing.T) {
	t.Parallel()
	conformance.Run(t, wire, []conformance.Case{
		{Name: "500 then success", Replies: []testfake.Reply{{Status: 500, Body: string(testfake.ReadTestdata(t, "api_error.json"))}, {SSE: "text.sse"}},
			Text: "The root filesystem on local is 42% full (21G of 50G used).", Stop: agent.StopEndTurn,
			Requests: 2, Waits: []time.Duration{time.Second}},
	})
}
