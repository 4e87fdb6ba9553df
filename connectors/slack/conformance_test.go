package slack_test

import (
	"testing"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/connectortest"
	"github.com/opsbot/opsbot/connectors/slack"
	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

// The Slack connector passes the connectors' conformance suite against
// the fake Slack: what it sends is every Web API request body (without
// the bot token's own field) and every Socket Mode frame.
func TestConformance(t *testing.T) {
	t.Parallel()
	r := startRig(t, slack.Config{}, slack.Options{})
	root := r.fake.Mention("C0OPS", "U04ALICE", "", "hello")
	r.next(t)
	h := connectortest.Harness{
		Conn:   r.conn,
		Events: r.events,
		Dest:   connectors.Dest{Platform: slack.Platform, Workspace: slackfake.Team, Channel: "C0OPS", Thread: root.TS},
		Shown: func(ref connectors.Ref) (string, bool) {
			m, ok := r.fake.Message(ref.Channel, ref.ID)
			return m.Shown(), ok
		},
		Mentioned:  func(id string) string { return "<@" + id + ">" },
		RateLimit:  r.fake.RateLimit,
		EndStreams: r.fake.EndStreams,
		Click: func(ref connectors.Ref, b connectors.Button, u connectors.User) {
			if r.fake.Click(ref.Channel, ref.ID, u.ID, b.ActionID) == "" {
				t.Errorf("message %s has no button %s", ref.ID, b.ActionID)
			}
		},
		Tasks: func(ref connectors.Ref) []connectors.Task {
			m, _ := r.fake.Message(ref.Channel, ref.ID)
			var out []connectors.Task
			for _, c := range m.Tasks {
				out = append(out, connectors.Task{ID: c.ID, Title: c.Title, Status: connectors.TaskStatus(c.Status), Details: c.Details, Output: c.Output})
			}
			return out
		},
		ClickFeedback: func(ref connectors.Ref, value string, u connectors.User) {
			if r.fake.ClickFeedback(ref.Channel, ref.ID, u.ID, value) == "" {
				t.Errorf("message %s has no feedback button of value %s", ref.ID, value)
			}
		},
		Sent:    r.fake.Sent,
		Secrets: []string{slackfake.BotToken, slackfake.AppToken},
	}
	for _, tc := range connectortest.Cases(h) {
		t.Run(tc.Name, func(t *testing.T) { tc.Test(t) })
	}
}
