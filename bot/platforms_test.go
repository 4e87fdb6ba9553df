package bot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/bot/render"
	"github.com/opsbot/opsbot/connectors"
)

// twoPlatformApprovers: U1 and U2 approve on both platforms.
var twoPlatformApprovers = approvals.GateConfig{Approvers: []approvals.ApproverConfig{{
	Slack:   approvals.SlackApprovers{Users: []string{"U1", "U2"}},
	Discord: approvals.DiscordApprovers{Users: []string{"U1", "U2"}},
}}}

// A request made on one platform is never approved by its requester's id
// on another (slack:U1 and discord:U1 may be one person), nor by anyone
// on another platform; on its own platform, another approver decides it.
func TestTwoPlatformsRequestIsDecidedOnlyWhereAsked(t *testing.T) {
	t.Parallel()
	slack, discord := newFakeConn(webLimits), newFakeConn(webLimits)
	slack.name, discord.name = "slack", "discord"
	dir := t.TempDir()
	b, stop := startBot(t, dir, slack, botOptions{gate: twoPlatformApprovers, more: []connectors.Connector{discord}})
	t.Cleanup(stop)

	for _, asked := range []*fakeConn{slack, discord} {
		other := discord
		if asked == discord {
			other = slack
		}
		target, thread := filepath.Join(dir, "approved-on-"+asked.name), "t-"+asked.name
		h := &harness{t: t, bot: b, conn: asked, st: storeOf(b), dir: dir}
		b.Handle(context.Background(), connectors.Event{ID: "ask-" + asked.name, Kind: connectors.EventMessage, Platform: asked.name,
			Workspace: "W1", Channel: "ops", Thread: thread, User: connectors.User{ID: "U1", Name: "U1"}, Text: "run local touch " + target, Mention: true})
		h.eventually("the card on "+asked.name, h.has(thread, "Approval needed"))
		card, ref, _ := h.find(thread, "Approval needed")
		ref.Platform = asked.name
		for _, voter := range []struct{ platform, id string }{{other.name, "U1"}, {other.name, "U2"}, {asked.name, "U1"}} {
			said := clickAs(t, b, voter.platform, voter.id, card, ref)
			if !strings.Contains(said, "not counted") {
				t.Errorf("%s:%s on a request asked on %s by U1 was told %q", voter.platform, voter.id, asked.name, said)
			}
		}
		if _, err := os.Stat(target); err == nil {
			t.Fatalf("the command asked on %s ran without an approver of %s", asked.name, asked.name)
		}
		if len(other.thread(thread)) != 0 {
			t.Errorf("%s shows messages of a thread on %s", other.name, asked.name)
		}
		clickAs(t, b, asked.name, "U2", card, ref)
		h.eventually("the command to run", func() bool { _, err := os.Stat(target); return err == nil })
	}
}

// clickAs presses Approve on a card as platform's user id, and returns
// what the bot answered them alone.
func clickAs(t *testing.T, b *Bot, platform, id string, card *fakeMsg, ref connectors.Ref) string {
	t.Helper()
	for _, btn := range card.msg.Buttons {
		if btn.ActionID != ActionApprove {
			continue
		}
		said := make(chan string, 1)
		b.Handle(context.Background(), connectors.Event{Kind: connectors.EventAction, Platform: platform, Workspace: "W1", Channel: "ops",
			Thread: ref.Thread, User: connectors.User{ID: id, Name: id}, ActionID: btn.ActionID, Value: btn.Value, Ref: ref,
			Respond: func(_ context.Context, text string) error { said <- connectors.PlainMentions(text); return nil }})
		return <-said
	}
	t.Fatalf("card has no Approve button: %+v", card.msg)
	return ""
}

// Each platform, and each workspace of one, has its own edit budget and
// its own streams: three answers at once (two Slack workspaces and a
// Discord server) each get their workspace's whole allowance, none goes
// over it, and each answer lands on its own platform only. A Slack stream
// that the platform ends mid-answer still ends complete, through an edit.
func TestTwoPlatformsKeepBudgetsAndStreamsApart(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const perMinute = 20
		slack := newStreamConn(connectors.Limits{MaxText: 3000, EditInterval: time.Second, EditsPerMinute: perMinute})
		slack.lifetime = 5 * time.Minute // the connector does not declare it
		slack.name = "slack"
		slack.limits.NativeStreaming = false // W1 and W2 stream by edits…
		discord := newFakeConn(connectors.Limits{MaxText: 2000, EditInterval: time.Second, EditsPerMinute: perMinute})
		discord.name = "discord"
		b := NewPlatforms(nil, nil, slack, discord)
		defer b.end()

		answers := map[string]string{}
		done := make(chan struct{})
		for _, d := range []connectors.Dest{
			{Platform: "slack", Workspace: "W1", Channel: "C1", Thread: "T1"},
			{Platform: "slack", Workspace: "W2", Channel: "C1", Thread: "T2"},
			{Platform: "discord", Workspace: "G1", Channel: "C1", Thread: "T3"},
		} {
			c, _ := b.conn(d.Platform)
			r := render.NewRenderer(t.Context(), c, b.budget(d.Platform, d.Workspace), nil, nil, d)
			var want strings.Builder
			for i := range 1200 { // ten minutes of text
				fmt.Fprintf(&want, "%s-%04d ", d.Thread, i)
			}
			answers[d.Thread] = want.String()
			go func() {
				defer func() { done <- struct{}{} }()
				text := want.String()
				for len(text) > 0 {
					n := min(len("T1-0000 "), len(text))
					r.Write(text[:n])
					text = text[n:]
					time.Sleep(500 * time.Millisecond)
				}
				r.Close(context.Background(), nil)
			}()
		}
		for range answers {
			<-done
		}
		for th, want := range answers {
			conn := slack.fakeConn
			if th == "T3" {
				conn = discord
			}
			if got := shown(conn, th); got != want {
				t.Errorf("%s shows %d of %d bytes", th, len(got), len(want))
			}
		}
		if slack.limited != 0 || discord.limited != 0 {
			t.Errorf("rate limited: slack %d, discord %d", slack.limited, discord.limited)
		}
		for _, c := range []struct {
			conn      *fakeConn
			workspace string
		}{{slack.fakeConn, "W1"}, {slack.fakeConn, "W2"}, {discord, "G1"}} {
			// Ten minutes at 90% of the allowance is 180 edits; a budget
			// shared by two workspaces gives each about half.
			if n := c.conn.editsIn(c.workspace); n < 150 {
				t.Errorf("%s %s: %d edits in ten minutes; its own budget allows about %d", c.conn.name, c.workspace, n, 10*perMinute*9/10)
			}
		}
	})
}

// An answer streamed natively on Slack while a Discord answer goes by
// edits: the Slack stream, ended by the platform mid-answer, ends complete
// through an edit; the Discord answer is untouched by it.
func TestTwoPlatformsExpiredStreamEndsByEdit(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		slack := newStreamConn(connectors.Limits{MaxText: 3000, EditInterval: time.Second, EditsPerMinute: 50})
		slack.lifetime, slack.name = 5*time.Minute, "slack"
		discord := newFakeConn(connectors.Limits{MaxText: 2000, EditInterval: time.Second, EditsPerMinute: 50})
		discord.name = "discord"
		b := NewPlatforms(nil, nil, slack, discord)
		defer b.end()
		var mu sync.Mutex
		got := map[string]string{}
		done := make(chan struct{})
		for _, d := range []connectors.Dest{{Platform: "slack", Workspace: "W1", Channel: "C1", Thread: "T1"}, {Platform: "discord", Workspace: "G1", Channel: "C1", Thread: "T2"}} {
			c, _ := b.conn(d.Platform)
			r := render.NewRenderer(t.Context(), c, b.budget(d.Platform, d.Workspace), nil, nil, d)
			go func() {
				defer func() { done <- struct{}{} }()
				want := sevenMinuteAnswer(r)
				r.Close(context.Background(), nil)
				mu.Lock()
				got[d.Thread] = want
				mu.Unlock()
			}()
		}
		<-done
		<-done
		if s := shown(slack.fakeConn, "T1"); s != got["T1"] {
			t.Errorf("slack shows %d of %d bytes", len(s), len(got["T1"]))
		}
		if s := shown(discord, "T2"); s != got["T2"] {
			t.Errorf("discord shows %d of %d bytes", len(s), len(got["T2"]))
		}
		slack.mu.Lock()
		defer slack.mu.Unlock()
		edits := 0
		for _, q := range slack.fakeConn.reqs() {
			if q.kind == "edit" {
				edits++
			}
		}
		if slack.expired != 1 || edits == 0 || len(slack.streams) != 1 {
			t.Errorf("slack: %d changes refused as expired, %d edits, %d streams; want 1, some, 1", slack.expired, edits, len(slack.streams))
		}
	})
}
