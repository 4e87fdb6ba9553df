package discord

import (
	"context"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/discord/discordtest"
)

const guild = "1000000000000000001"

// A mention in a text channel is the root of a thread: the event names
// the channel and the message as the thread, and the first post there
// opens a public thread from the message, named from the question (at
// most 100 characters).
func TestMentionInAChannelOpensAThread(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	ch := f.AddChannel(guild, "ops")
	alice := f.NewUser("alice")
	c, events := started(t, f, Config{})
	question := "why is web-1 slow " + strings.Repeat("and ", 40) + "what now?"
	msg := f.Mention(alice, ch, question)
	ev := next(t, events, connectors.EventMessage)
	if ev.Channel != ch || ev.Thread != msg || ev.ID != msg || !ev.Mention || ev.Text != question || ev.User.ID != alice.ID || ev.Workspace != guild {
		t.Fatalf("the mention came as %+v", ev)
	}
	ref, err := c.Post(t.Context(), connectors.Dest{Platform: Platform, Workspace: guild, Channel: ch, Thread: msg}, connectors.Message{Text: "Looking."})
	if err != nil {
		t.Fatal(err)
	}
	th, ok := f.Channel(msg)
	if !ok || th.Type != discordtest.TypeThread || th.ParentID != ch {
		t.Fatalf("no thread from the message: %+v", th)
	}
	if n := len([]rune(th.Name)); n > 100 || !strings.HasPrefix(th.Name, "why is web-1 slow and") || !strings.HasSuffix(th.Name, "…") {
		t.Errorf("thread name %q (%d characters); want the question cut to 100", th.Name, n)
	}
	if ms := f.Messages(msg); len(ms) != 1 || ms[0].ID != ref.ID || ms[0].Content != "Looking." {
		t.Errorf("the thread holds %+v; want the post", ms)
	}
	// A message of the thread is edited there.
	if err := c.Edit(t.Context(), ref, connectors.Message{Text: "Looked."}); err != nil {
		t.Fatal(err)
	}
	if m, _ := f.Message(ref.ID); m.Content != "Looked." {
		t.Errorf("after the edit the message shows %q", m.Content)
	}
}

// A mention inside a thread someone opened uses that thread; the event's
// channel is the thread's parent, so rules naming the channel cover it.
func TestMentionInAThreadUsesIt(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	ch := f.AddChannel(guild, "ops")
	th := f.AddThread(ch, "incident 42")
	alice := f.NewUser("alice")
	c, events := started(t, f, Config{})
	f.Mention(alice, th, "check the disks")
	ev := next(t, events, connectors.EventMessage)
	if ev.Channel != ch || ev.Thread != th || !ev.Mention {
		t.Fatalf("the mention in a thread came as %+v; want channel %s, thread %s", ev, ch, th)
	}
	if _, err := c.Post(t.Context(), connectors.Dest{Platform: Platform, Channel: ev.Channel, Thread: ev.Thread}, connectors.Message{Text: "ok"}); err != nil {
		t.Fatal(err)
	}
	if ms := f.Messages(th); len(ms) != 2 || !ms[1].Bot {
		t.Errorf("the thread holds %+v; want the mention and the answer", ms)
	}
}

// A direct message is a session of its own: channel and thread are the
// DM's, and it is addressed to the bot without a mention.
func TestDirectMessageIsItsOwnSession(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	dm := f.AddDM()
	alice := f.NewUser("alice")
	c, events := started(t, f, Config{})
	f.Say(alice, dm, "disk usage on web-1?")
	ev := next(t, events, connectors.EventMessage)
	if ev.Channel != dm || ev.Thread != dm || !ev.Mention || ev.Text != "disk usage on web-1?" || len(ev.User.Groups) != 0 {
		t.Fatalf("the DM came as %+v", ev)
	}
	if _, err := c.Post(t.Context(), connectors.Dest{Platform: Platform, Channel: dm, Thread: dm}, connectors.Message{Text: "41%"}); err != nil {
		t.Fatal(err)
	}
	if ms := f.Messages(dm); len(ms) != 2 || ms[1].Content != "41%" {
		t.Errorf("the DM holds %+v", ms)
	}
}

// Without the Message Content intent only mentions and DMs reach the bot
// (Discord sends no text otherwise); with it, every message of a thread
// does, Mention false, MentionsOthers set when it names someone else. The
// bot's own messages never do.
func TestThreadMessagesWithoutMention(t *testing.T) {
	t.Parallel()
	for _, content := range []bool{false, true} {
		f := newFake(t)
		f.MessageContentAllowed = true
		ch := f.AddChannel(guild, "ops")
		th := f.AddThread(ch, "incident")
		alice, bob := f.NewUser("alice"), f.NewUser("bob")
		c, events := started(t, f, Config{MessageContent: content})
		if _, err := c.Post(t.Context(), connectors.Dest{Platform: Platform, Channel: ch, Thread: th}, connectors.Message{Text: "bot speaking"}); err != nil {
			t.Fatal(err)
		}
		f.Say(alice, th, "and the logs?")
		f.Say(alice, th, "<@"+bob.ID+"> can you look?", bob.ID)
		f.Mention(alice, th, "last")
		var got []connectors.Event
		for {
			ev := next(t, events, connectors.EventMessage)
			got = append(got, ev)
			if ev.Text == "last" {
				break
			}
		}
		if !content {
			if len(got) != 1 {
				t.Errorf("without message_content: %d events %+v; want the mention alone", len(got), got)
			}
			continue
		}
		if len(got) != 3 {
			t.Fatalf("with message_content: %d events %+v; want 3", len(got), got)
		}
		byText := map[string]connectors.Event{}
		for _, ev := range got {
			byText[ev.Text] = ev
		}
		if ev := byText["and the logs?"]; ev.Mention || ev.MentionsOthers || ev.Thread != th || ev.Channel != ch {
			t.Errorf("a follow-up came as %+v", ev)
		}
		if ev := byText[connectors.Mention(bob.ID)+" can you look?"]; ev.Mention || !ev.MentionsOthers {
			t.Errorf("a message to bob came as %+v; want MentionsOthers and bob as a mention placeholder", ev)
		}
		if f.Gateway().Intents&(1<<15) == 0 {
			t.Error("message_content on, but the intent was not asked for")
		}
	}
}

// The Message Content intent asked for but not enabled in the portal:
// Discord closes the gateway with 4014, and Start says what to do.
func TestDisallowedIntentSaysWhatToDo(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	c, err := New(Config{Token: testToken, APIURL: f.URL, MessageContent: true}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Start(t.Context(), func(ctx context.Context, ev connectors.Event) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "Message Content") || !strings.Contains(err.Error(), "developer portal") {
		t.Errorf("Start: %v; want the intent named and where to turn it on", err)
	}
}

// A token Discord refuses ends Start with what to do, without the token.
func TestRefusedTokenSaysWhatToDo(t *testing.T) {
	t.Parallel()
	f := discordtest.New(t, "another-token")
	c, err := New(Config{Token: testToken, APIURL: f.URL}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Start(t.Context(), func(ctx context.Context, ev connectors.Event) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "Reset Token") || strings.Contains(err.Error(), testToken) {
		t.Errorf("Start: %v; want where to get a token, and no token", err)
	}
}

// A message forwarded into a thread reaches the bot as quoted context:
// marked as forwarded, fenced after the person's own words (none: a
// forward has no text of its own), a mention in it a placeholder that
// does not count as the person naming someone. Without the Message
// Content intent Discord sends no forward's text, and nothing reaches the
// bot.
func TestForwardedMessageIsQuoted(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.MessageContentAllowed = true
	ch := f.AddChannel(guild, "ops")
	thread := f.AddThread(ch, "disk on web-1")
	alice := f.NewUser("alice")
	_, events := started(t, f, Config{MessageContent: true})
	f.Forward(alice, thread, "<@1100000000000000999> said: run `rm -rf /tmp/x` now")
	ev := next(t, events, connectors.EventMessage)
	want := forwardedHeading + "\n```\n" + connectors.Mention("1100000000000000999") + " said: run `rm -rf /tmp/x` now\n```"
	if ev.Text != want || ev.Mention || ev.MentionsOthers || ev.Channel != ch || ev.Thread != thread {
		t.Errorf("the forward came as %+v; want the text %q", ev, want)
	}
	g := newFake(t)
	ch = g.AddChannel(guild, "ops")
	thread = g.AddThread(ch, "disk on web-1")
	_, events = started(t, g, Config{})
	g.Forward(alice, thread, "run this")
	g.Mention(alice, thread, "and this?")
	if ev := next(t, events, connectors.EventMessage); ev.Text != "and this?" {
		t.Errorf("without the intent the bot got %q before the mention", ev.Text)
	}
}
