package discord

import (
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/connectortest"
	"github.com/opsbot/opsbot/connectors/discord/discordtest"
)

// Discord passes the connectors' conformance suite against the fake: what
// it sends is every request body and gateway frame but IDENTIFY and
// RESUME (which carry the token by design, to Discord alone).
func TestConformance(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	guild := "1000000000000000001"
	ch := f.AddChannel(guild, "ops")
	dm := f.AddDM()
	c, events := started(t, f, Config{})
	h := connectortest.Harness{
		Conn:   c,
		Events: events,
		Dest:   connectors.Dest{Platform: Platform, Workspace: guild, Channel: ch},
		Shown: func(ref connectors.Ref) (string, bool) {
			m, ok := f.Message(ref.ID)
			return m.Content, ok
		},
		Mentioned: func(id string) string {
			if isSnowflake(id) {
				return "<@" + id + ">"
			}
			return "@" + id // a person of another platform
		},
		RateLimit: f.RateLimitNext,
		Click: func(ref connectors.Ref, b connectors.Button, u connectors.User) {
			for _, id := range f.Buttons(ref.ID) {
				if strings.HasPrefix(id, b.ActionID+":") && strings.HasSuffix(id, b.Value) {
					f.Click(discordtest.User{ID: u.ID, Name: u.Name}, ref.ID, id)
					return
				}
			}
			t.Errorf("no button %s on message %s", b.ActionID, ref.ID)
		},
		// A forward reaches the bot in a direct message (in a thread it
		// needs the Message Content intent, which this connector lacks).
		Forward: func(text string) { f.Forward(f.NewUser("carol"), dm, text) },
		Sent:    f.Sent,
		Secrets: []string{testToken},
	}
	for _, tc := range connectortest.Cases(h) {
		t.Run(tc.Name, func(t *testing.T) { tc.Test(t) })
	}
	_ = time.Second
}
