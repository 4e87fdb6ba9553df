package slack_test

import (
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/slack"
	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

// A health change posted as a broadcast thread reply reaches Slack with
// reply_broadcast=true and its mentions first, as Slack's markup: the
// group, the person and <!here> ping; a Discord role, <!channel> and a
// mention written as text in the message are not sent as mentions.
func TestBroadcastReplyWithMentionsOnTheWire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := slackfake.NewLocal()
		rec := &formRecorder{next: fake.Transport()}
		cfg := slack.Config{BotToken: slackfake.BotToken, AppToken: slackfake.AppToken, APIURL: fake.URL}
		c, err := slack.New(cfg, slack.Options{HTTPClient: &http.Client{Transport: rec}})
		if err != nil {
			t.Fatal(err)
		}
		to := connectors.Dest{Platform: slack.Platform, Channel: "C0OPS"}
		root, err := c.Post(t.Context(), to, connectors.Message{Text: "**Health · nightly** — ✓ 2 ok"})
		if err != nil {
			t.Fatal(err)
		}
		to.Thread = root.Thread
		m := connectors.Message{Text: "✗ disk failing on web-02 <!everyone>", Broadcast: true,
			Notify: []string{"<!subteam^S0SRE>", "<@U04ALICE>", "<!here>", "<@&234567890123456789>", "<!channel>"}}
		ref, err := c.Post(t.Context(), to, m)
		if err != nil {
			t.Fatal(err)
		}
		form := rec.last(t)
		if got := form.Get("reply_broadcast"); got != "true" || form.Get("thread_ts") != root.Thread {
			t.Errorf("reply_broadcast=%q thread_ts=%q; want true in thread %s", got, form.Get("thread_ts"), root.Thread)
		}
		const pings = "<!subteam^S0SRE> <@U04ALICE> <!here> "
		if text := form.Get("text"); !strings.HasPrefix(text, pings+"✗ disk failing on web-02 &lt;!everyone&gt;") {
			t.Errorf("text %q; want it to open with %q and the message's own <!everyone> escaped", text, pings)
		}
		if got, _ := fake.Message("C0OPS", ref.ID); !got.Broadcast || got.Thread != root.Thread {
			t.Errorf("the fake kept broadcast=%v in thread %q; want a broadcast reply in %s", got.Broadcast, got.Thread, root.Thread)
		}
		if _, err := c.Post(t.Context(), to, connectors.Message{Text: "details"}); err != nil {
			t.Fatal(err)
		}
		if form := rec.last(t); form.Has("reply_broadcast") {
			t.Errorf("a plain thread reply carried reply_broadcast=%q", form.Get("reply_broadcast"))
		}
	})
}
