package bot

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/approvals"
)

// A retried model call's notice ("…, retrying in 2 s") shows while the
// call waits and is gone once the answer is finished (issue 33's try-out
// found it still on a finished answer).
func TestRetryNoticeGoesWhenTheAnswerFinishes(t *testing.T) {
	t.Parallel()
	shown := make(chan struct{})
	m := &model{steps: []func(context.Context, agent.Request, func(agent.StreamEvent) bool){
		func(ctx context.Context, req agent.Request, yield func(agent.StreamEvent) bool) {
			agent.RetryNotice(ctx)(2*time.Second, "rate limited by the model API") // as a provider does before it waits
			// The wait, until the test has seen the notice.
			select {
			case <-shown:
			case <-ctx.Done():
				return
			}
			text("Done: nginx is up.")(ctx, req, yield)
		},
	}}
	h := newHarness(t, approvals.GateConfig{}, m)
	h.say("alice", "t1", "is nginx up?")
	h.eventually("the retry notice while the call waits", h.has("t1", "rate limited by the model API, retrying in 2 s"))
	close(shown)
	h.eventually("the answer", h.has("t1", "Done: nginx is up."))
	h.settled("t1")
	answer, _, _ := h.find("t1", "Done: nginx is up.")
	if strings.Contains(answer.msg.Text+answer.msg.Context, "retrying") {
		t.Errorf("the finished answer still shows the retry:\n%s\n%s", answer.msg.Text, answer.msg.Context)
	}
}
