package slack_test

import (
	"os"
	"slices"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/slack"
	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

// manifest is what the test reads of deploy/slack-app-manifest.yaml.
type manifest struct {
	OAuth struct {
		Scopes struct {
			Bot []string `yaml:"bot"`
		} `yaml:"scopes"`
	} `yaml:"oauth_config"`
	Settings struct {
		Events struct {
			BotEvents []string `yaml:"bot_events"`
		} `yaml:"event_subscriptions"`
		Interactivity struct {
			Enabled bool `yaml:"is_enabled"`
		} `yaml:"interactivity"`
		SocketMode bool `yaml:"socket_mode_enabled"`
	} `yaml:"settings"`
}

// The app manifest grants every scope and subscribes to every event the
// connector uses: the connector is driven through everything it does
// against the fake, and each method the fake saw called must be one whose
// scope the manifest has.
func TestManifestHasWhatTheCodeUses(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../../deploy/slack-app-manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if !m.Settings.SocketMode || !m.Settings.Interactivity.Enabled {
		t.Errorf("the manifest has socket mode %v, interactivity %v; want both on", m.Settings.SocketMode, m.Settings.Interactivity.Enabled)
	}
	for ev, scope := range slack.BotEvents {
		if !slices.Contains(m.Settings.Events.BotEvents, ev) {
			t.Errorf("the connector reads %s, the manifest does not subscribe to it", ev)
		}
		if !slices.Contains(m.OAuth.Scopes.Bot, scope) {
			t.Errorf("event %s needs scope %s, not in the manifest", ev, scope)
		}
	}

	r := startRig(t, slack.Config{}, slack.Options{UserGroups: []string{"S0SRE"}})
	r.fake.SetGroup("S0SRE", "U0BOB")
	root := r.fake.Mention("C0OPS", "U0ALICE", "", "hi")
	r.next(t)
	ctx := t.Context()
	d := connectors.Dest{Channel: "C0OPS", Thread: root.TS, Recipient: connectors.User{ID: "U0ALICE"}}
	r.conn.Thinking(ctx, d, "is thinking…")
	q := connectors.Event{Kind: connectors.EventMessage, Channel: "C0OPS", Thread: root.TS, Ref: connectors.Ref{Channel: "C0OPS", ID: root.TS}}
	r.conn.Acknowledge(ctx, q)
	r.conn.Done(ctx, q)
	th := r.fake.StartAssistantThread("D0ALICE", "U0ALICE")
	r.fake.Reply("D0ALICE", "U0ALICE", th.Thread, "what's failing?")
	r.next(t)
	r.fake.WaitFor(30*time.Second, func(s *slackfake.Server) bool {
		return s.Calls("assistant.threads.setTitle") > 0 && s.Calls("assistant.threads.setSuggestedPrompts") > 0
	})
	ref, _ := r.conn.Post(ctx, d, connectors.Message{Text: "a", Buttons: []connectors.Button{{ActionID: "approve", Label: "Approve"}}})
	r.conn.Edit(ctx, ref, connectors.Message{Text: "b"})
	st, _ := r.conn.StartStream(ctx, d, connectors.Message{Text: "c"})
	r.conn.AppendStream(ctx, st, "d")
	r.conn.StopStream(ctx, st, connectors.Message{Text: "cd"})
	r.conn.EndCut(ctx, ref, "b", " (interrupted)") // a message a killed process left
	card, _ := r.conn.Post(ctx, d, connectors.Message{Text: "e", Buttons: []connectors.Button{{ActionID: "approve", Label: "Approve"}}})
	r.fake.Click("C0OPS", card.ID, "U0BOB", "approve")
	click := r.next(t)
	click.Respond(ctx, "counted")
	for _, method := range r.fake.Methods() {
		scope, known := slack.MethodScopes[method]
		if !known {
			t.Errorf("the connector calls %s, which slack.MethodScopes does not list", method)
		} else if scope != "" && !slices.Contains(m.OAuth.Scopes.Bot, scope) {
			t.Errorf("the connector calls %s, which needs scope %s, not in the manifest", method, scope)
		}
	}
	if len(r.fake.Methods()) < len(slack.MethodScopes) {
		t.Errorf("the workout called %v; it should call every method of slack.MethodScopes", r.fake.Methods())
	}
}
