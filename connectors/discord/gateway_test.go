package discord

import (
	"testing"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/discord/discordtest"
)

// gatewayCase is a way the gateway connection breaks, and what the
// session must do about it.
type gatewayCase struct {
	name   string
	break_ func(f *discordtest.Fake)
	// identifies and resumes are the counts after the break.
	identifies, resumes int
}

// resumes says whether the session survives the break: a mention made
// while the connection was down is then replayed at RESUME.
func (g gatewayCase) resumable() bool { return g.resumes > 0 }

// After each way the gateway breaks, the connector is connected again,
// by RESUME where the session survives (no second IDENTIFY: they are
// budgeted at 1,000 a day) and IDENTIFY where it does not, and a mention
// made while it was away still arrives (replayed at RESUME) or, after a
// new session, the next one does.
func TestGatewayRecovers(t *testing.T) {
	t.Parallel()
	cases := []gatewayCase{
		{"a dropped connection resumes", func(f *discordtest.Fake) { f.Drop() }, 1, 1},
		{"op 7 reconnect resumes", func(f *discordtest.Fake) { f.Reconnect() }, 1, 1},
		{"op 9 resumable resumes", func(f *discordtest.Fake) { f.InvalidSession(true) }, 1, 1},
		{"op 9 not resumable identifies", func(f *discordtest.Fake) { f.InvalidSession(false) }, 2, 0},
		{"a refused resume identifies", func(f *discordtest.Fake) { f.RefuseResume(true); f.Drop() }, 2, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t)
			ch := f.AddChannel("1000000000000000001", "ops")
			alice := f.NewUser("alice")
			_, events := started(t, f, Config{})
			f.Mention(alice, ch, "before")
			if ev := next(t, events, connectors.EventMessage); ev.Text != "before" {
				t.Fatalf("first event %+v", ev)
			}
			tc.break_(f)
			if tc.resumable() {
				f.Mention(alice, ch, "while away")
			}
			ok := f.Wait(wait, func(f *discordtest.Fake) bool {
				g := f.GatewayLocked()
				return g.Connected && g.Identifies == tc.identifies && g.Resumes == tc.resumes
			})
			if !ok {
				t.Fatalf("gateway after the break: %+v; want %d identifies, %d resumes, connected", f.Gateway(), tc.identifies, tc.resumes)
			}
			if tc.resumable() {
				if ev := next(t, events, connectors.EventMessage); ev.Text != "while away" {
					t.Fatalf("the mention made while away came as %+v", ev)
				}
			}
			f.Mention(alice, ch, "after")
			if ev := next(t, events, connectors.EventMessage); ev.Text != "after" {
				t.Fatalf("event after the break: %+v", ev)
			}
		})
	}
}
