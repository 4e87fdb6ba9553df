package slack_test

import (
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/slack"
	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

// What reaches the bot of what Slack sends: a mention (its message copy
// dropped), a reply in the thread unaddressed, one that talks to someone
// else marked so, a direct message, and neither the bot's own messages
// nor other bots'. Every envelope is acknowledged.
func TestInboundEvents(t *testing.T) {
	t.Parallel()
	r := startRig(t, slack.Config{}, slack.Options{})
	r.fake.AddUser("U0ALICE", "alice")
	m := r.fake.Mention("C0OPS", "U0ALICE", "", "disk full on web-1?")
	for _, id := range m.Envelopes {
		r.acked(t, id)
	}
	ev := r.next(t)
	if !ev.Mention || ev.Text != "disk full on web-1?" || ev.Thread != m.TS || ev.Channel != "C0OPS" || ev.User.ID != "U0ALICE" ||
		ev.User.Name != "alice" || ev.Workspace != slackfake.Team || ev.ID != m.EventID || ev.Platform != slack.Platform {
		t.Errorf("the mention came as %+v", ev)
	}
	r.fake.Reply("C0OPS", "U0ALICE", m.TS, "and web-2 too")
	ev = r.next(t)
	if ev.Mention || ev.MentionsOthers || ev.Text != "and web-2 too" || ev.Thread != m.TS {
		t.Errorf("a reply in the thread came as %+v; want it unaddressed, in the thread", ev)
	}
	r.fake.Reply("C0OPS", "U0ALICE", m.TS, "<@U0BOB> can you look & tell me?")
	ev = r.next(t)
	if ev.Mention || !ev.MentionsOthers || ev.Text != connectors.Mention("U0BOB")+" can you look & tell me?" {
		t.Errorf("a reply to bob came as %+v; want MentionsOthers and bob as a mention", ev)
	}
	// Not for the bot: its own message, another bot's, and a channel
	// message outside a thread. The direct message after them is the
	// next event.
	r.fake.Send("events_api", botMessage(slackfake.BotUser, ""), 0)
	r.fake.Send("events_api", botMessage("U0OTHER", "B0OTHER"), 0)
	r.fake.Reply("C0OPS", "U0ALICE", "", "lunch?")
	dm := r.fake.DirectMessage("D0ALICE", "U0ALICE", "status of web-1")
	ev = r.next(t)
	if !ev.Mention || ev.Channel != "D0ALICE" || ev.Thread != dm.TS || ev.Text != "status of web-1" {
		t.Errorf("after messages not for the bot, the next event is %+v; want the direct message", ev)
	}
}

func botMessage(user, botID string) map[string]any {
	ev := map[string]any{"type": "message", "user": user, "text": "I am a bot", "ts": "1700000999.000001", "thread_ts": "1700000001.000001",
		"channel": "C0OPS", "channel_type": "channel"}
	if botID != "" {
		ev["bot_id"] = botID
		ev["subtype"] = "bot_message"
	}
	return map[string]any{"type": "event_callback", "team_id": slackfake.Team, "event_id": "Ev-bot-" + user, "event": ev}
}

// A click carries the clicker's user groups among those approver rules
// name; on a plan without user groups only the user id counts, and the
// log says so once.
func TestClickCarriesUserGroups(t *testing.T) {
	t.Parallel()
	r := startRig(t, slack.Config{}, slack.Options{UserGroups: []string{"S0SRE", "S0DBA"}})
	r.fake.SetGroup("S0SRE", "U0CAROL")
	r.fake.SetGroup("S0DBA", "U0DAVE")
	m := r.fake.Mention("C0OPS", "U0ALICE", "", "hi")
	r.next(t)
	ref, err := r.conn.Post(t.Context(), connectors.Dest{Channel: "C0OPS", Thread: m.TS},
		connectors.Message{Text: "approve?", Buttons: []connectors.Button{{ActionID: "approve", Value: "req-1", Label: "Approve"}}})
	if err != nil {
		t.Fatal(err)
	}
	r.fake.Click("C0OPS", ref.ID, "U0CAROL", "approve")
	ev := r.next(t)
	if ev.Kind != connectors.EventAction || strings.Join(ev.User.Groups, ",") != "S0SRE" || ev.Ref.ID != ref.ID || ev.Thread != m.TS || ev.Value != "req-1" {
		t.Errorf("carol's click came as %+v; want her group S0SRE", ev)
	}
	if err := ev.Respond(t.Context(), "Your approval is counted"); err != nil {
		t.Fatal(err)
	}
	if e := r.fake.Ephemerals(); len(e) != 1 || e[0].User != "U0CAROL" || e[0].Thread != m.TS || e[0].Text != "Your approval is counted" {
		t.Errorf("the reply to the click is %+v; want one to carol alone, in the thread", e)
	}

	free := startRig(t, slack.Config{}, slack.Options{UserGroups: []string{"S0SRE", "S0DBA"}})
	free.fake.FreePlan()
	m = free.fake.Mention("C0OPS", "U0ALICE", "", "hi")
	free.next(t)
	ref, _ = free.conn.Post(t.Context(), connectors.Dest{Channel: "C0OPS", Thread: m.TS},
		connectors.Message{Text: "approve?", Buttons: []connectors.Button{{ActionID: "approve", Value: "req-1", Label: "Approve"}}})
	for range 2 {
		free.fake.Click("C0OPS", ref.ID, "U0CAROL", "approve")
		if ev := free.next(t); len(ev.User.Groups) != 0 {
			t.Errorf("on a free plan a click carries groups %v", ev.User.Groups)
		}
	}
	if n := strings.Count(free.logs.String(), "plan_upgrade_required"); n != 1 {
		t.Errorf("the log names the plan without user groups %d times; want once:\n%s", n, free.logs)
	}
}

// A revoked token stops the connector at once with an error that says
// what to do, and Ready says so; nothing is retried.
func TestRevokedTokenStops(t *testing.T) {
	t.Parallel()
	fake := slackfake.New()
	t.Cleanup(fake.Close)
	fake.Refuse("token_revoked")
	r := startOn(t, fake, slack.Config{}, slack.Options{}, false)
	var err error
	select {
	case err = <-r.done:
		r.done <- err // for the cleanup
	case <-time.After(wait):
		t.Fatal("the connector did not stop on token_revoked")
	}
	if err == nil || !strings.Contains(err.Error(), "bot token was refused by Slack (token_revoked)") || !strings.Contains(err.Error(), "make a new bot token") {
		t.Errorf("Start returned %v; want the refusal and what to do", err)
	}
	if ready := r.conn.Ready(t.Context()); ready == nil || ready.Error() != err.Error() {
		t.Errorf("Ready = %v; want the same reason", ready)
	}
	if n := fake.Calls("auth.test"); n != 1 {
		t.Errorf("auth.test called %d times; a revoked token is not retried", n)
	}
}

// A wrong app-level token (the bot token being right) stops the connector
// with an error that names the app-level token, not the bot token, says
// how to make a new one, and reads as words under the connector's name.
func TestWrongAppTokenNamesIt(t *testing.T) {
	t.Parallel()
	fake := slackfake.New()
	t.Cleanup(fake.Close)
	r := startOn(t, fake, slack.Config{AppToken: "xapp-wrong"}, slack.Options{}, false)
	var err error
	select {
	case err = <-r.done:
		r.done <- err // for the cleanup
	case <-time.After(wait):
		t.Fatal("the connector did not stop on a wrong app-level token")
	}
	if err == nil {
		t.Fatal("Start returned nil; want the refusal")
	}
	msg := err.Error()
	for _, want := range []string{"app-level token was refused by Slack (invalid_auth)", "xapp-", "connections:write", "api.slack.com/apps"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Start returned %q; want it to say %q", msg, want)
		}
	}
	for _, bad := range []string{"bot token", "slack:", "stopped:", "xapp-wrong"} {
		if strings.Contains(msg, bad) {
			t.Errorf("Start returned %q; it should not say %q", msg, bad)
		}
	}
	if ready := r.conn.Ready(t.Context()); ready == nil || ready.Error() != msg {
		t.Errorf("Ready = %v; want the same reason", ready)
	}
}

// Record, then acknowledge: an envelope whose event the bot could not
// record (its Handler returned an error) is left unacknowledged, so that
// Slack delivers it again; the redelivery, recorded, is acknowledged.
// Before, every envelope was acknowledged before the bot saw it.
func TestEnvelopeNotRecordedIsNotAcknowledged(t *testing.T) {
	t.Parallel()
	r := startRig(t, slack.Config{}, slack.Options{})
	r.fake.AddUser("U0ALICE", "alice")
	r.refuse.Store(true)
	m := r.fake.Mention("C0OPS", "U0ALICE", "", "disk full on web-1?")
	r.next(t)                  // refused
	r.acked(t, m.Envelopes[1]) // the message's copy is not for the bot: acknowledged at once
	r.refuse.Store(false)
	dm := r.fake.DirectMessage("D0ALICE", "U0ALICE", "status of web-1")
	r.next(t)
	r.acked(t, dm.Envelopes[0]) // envelopes are handled in order: the refused one's turn has passed
	select {
	case <-r.fake.Acked(m.Envelopes[0]):
		t.Fatal("an envelope whose event was not recorded was acknowledged: Slack will not deliver it again")
	default:
	}
	again := r.fake.Resend("events_api", m.Payloads[0], 1)
	if ev := r.next(t); ev.ID != m.EventID {
		t.Errorf("the redelivery came as %+v", ev)
	}
	r.acked(t, again)
}
