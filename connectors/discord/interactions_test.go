package discord

import (
	"fmt"
	"slices"
	"testing"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/discord/discordtest"
)

// A click in a thread: acknowledged in time with a deferred update (type
// 6), the event names the clicker with their roles, the thread under its
// parent channel and the card; Respond answers the clicker alone.
func TestClickInAThread(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	ch := f.AddChannel(guild, "ops")
	th := f.AddThread(ch, "incident")
	role := f.NewRole()
	bob := f.NewUser("bob", role)
	c, events := started(t, f, Config{})
	b := connectors.Button{ActionID: "approve", Value: "a1", Label: "Approve"}
	ref, err := c.Post(t.Context(), connectors.Dest{Platform: Platform, Workspace: guild, Channel: ch, Thread: th}, connectors.Message{Text: "ok?", Buttons: []connectors.Button{b}})
	if err != nil {
		t.Fatal(err)
	}
	click := f.Click(bob, ref.ID, f.Buttons(ref.ID)[0])
	ev := next(t, events, connectors.EventAction)
	if ev.ID != click || ev.Channel != ch || ev.Thread != th || ev.Ref.ID != ref.ID || ev.Ref.Thread != th || ev.User.ID != bob.ID ||
		!slices.Equal(ev.User.Groups, []string{role}) || ev.ActionID != "approve" || ev.Value != "a1" {
		t.Fatalf("the click came as %+v", ev)
	}
	if err := ev.Respond(t.Context(), "you are not an approver for this channel and host"); err != nil {
		t.Fatalf("respond: %v", err)
	}
	if inTime, typ := f.Acked(click); !inTime || typ != 6 {
		t.Errorf("acknowledged in time %v, type %d; want a deferred update within 3 s", inTime, typ)
	}
	ms := f.Messages(th)
	last := ms[len(ms)-1]
	if !last.Ephemeral || last.For != bob.ID || last.Content != "you are not an approver for this channel and host" {
		t.Errorf("the refusal is %+v; want an ephemeral message to bob", last)
	}
}

// A click in a DM carries no member and so no roles.
func TestClickInADMHasNoRoles(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	dm := f.AddDM()
	carol := f.NewUser("carol", f.NewRole())
	c, events := started(t, f, Config{})
	ref, err := c.Post(t.Context(), connectors.Dest{Platform: Platform, Channel: dm, Thread: dm},
		connectors.Message{Text: "ok?", Buttons: []connectors.Button{{ActionID: "approve", Value: "a1", Label: "Approve"}}})
	if err != nil {
		t.Fatal(err)
	}
	f.Click(carol, ref.ID, f.Buttons(ref.ID)[0])
	ev := next(t, events, connectors.EventAction)
	if ev.User.ID != carol.ID || len(ev.User.Groups) != 0 || ev.Channel != dm || ev.Thread != dm {
		t.Errorf("the DM click came as %+v; want carol without roles", ev)
	}
}

// A button from before a restart whose custom_id this process cannot
// read is answered to the clicker, and nothing is handed on.
func TestUnknownButtonIsRefusedPolitely(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	ch := f.AddChannel(guild, "ops")
	alice := f.NewUser("alice")
	c, _ := started(t, f, Config{})
	ref, err := c.Post(t.Context(), connectors.Dest{Platform: Platform, Channel: ch}, connectors.Message{Text: "old card",
		Buttons: []connectors.Button{{ActionID: "approve", Value: string(make([]byte, 120)), Label: "Approve"}}})
	if err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	clear(c.custom) // as after a restart
	c.mu.Unlock()
	f.Click(alice, ref.ID, f.Buttons(ref.ID)[0])
	ok := f.Wait(wait, func(f *discordtest.Fake) bool {
		return slices.ContainsFunc(f.MessagesLocked(ch), func(m discordtest.Message) bool { return m.Ephemeral && m.For == alice.ID })
	})
	if !ok {
		t.Error("the clicker of an unreadable button was told nothing")
	}
}

// A click the bot could not record (its Handler refused it) is answered
// to the clicker alone, in words: nothing was done, press it again.
// Before, it was acknowledged as if taken, and the person saw nothing.
func TestClickNotRecordedAsksToPressAgain(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	ch := f.AddChannel(guild, "ops")
	th := f.AddThread(ch, "incident")
	bob := f.NewUser("bob")
	c, events := startedWith(t, f, Config{}, func(connectors.Event) error {
		return fmt.Errorf("%w: its database did not answer within 2s", connectors.ErrNotRecorded)
	})
	ref, err := c.Post(t.Context(), connectors.Dest{Platform: Platform, Workspace: guild, Channel: ch, Thread: th},
		connectors.Message{Text: "ok?", Buttons: []connectors.Button{{ActionID: "approve", Value: "a1", Label: "Approve"}}})
	if err != nil {
		t.Fatal(err)
	}
	f.Click(bob, ref.ID, f.Buttons(ref.ID)[0])
	next(t, events, connectors.EventAction)
	want := "opsbot could not record this click, so it did nothing with it (its database did not answer within 2s). Press the button again."
	ok := f.Wait(wait, func(f *discordtest.Fake) bool {
		return slices.ContainsFunc(f.MessagesLocked(th), func(m discordtest.Message) bool {
			return m.Ephemeral && m.For == bob.ID && m.Content == want
		})
	})
	if !ok {
		t.Errorf("the clicker was not told %q: %+v", want, f.Messages(th))
	}
}
