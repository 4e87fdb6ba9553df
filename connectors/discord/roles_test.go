package discord

import (
	"testing"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/discord/discordtest"
)

// Typing "@opsbot", a person may pick the bot's managed role (named as the
// bot) rather than the bot: the message names the role (<@&id>, in
// mention_roles) and not the bot. It is a mention of the bot all the same:
// in a channel it opens a thread from the message, in a thread it goes on
// there, and the role's mention is taken out of the text. Without the
// Message Content intent the fake leaves the text out (Discord's strict
// reading): the bot still hears the mention, as a bare one.
func TestBotRoleMentionIsAMention(t *testing.T) {
	t.Parallel()
	for _, content := range []bool{false, true} {
		f := newFake(t)
		f.MessageContentAllowed = true
		ch := f.AddChannel(guild, "ops")
		th := f.AddThread(ch, "incident")
		role := f.BotRole(guild)
		alice := f.NewUser("alice")
		c, events := started(t, f, Config{MessageContent: content})
		want := map[bool]string{false: "", true: "why is web-1 slow?"}[content]

		msg := f.MentionRole(alice, ch, role, "why is web-1 slow?")
		ev := next(t, events, connectors.EventMessage)
		if ev.ID != msg || ev.Channel != ch || ev.Thread != msg || !ev.Mention || ev.MentionsOthers || ev.Text != want {
			t.Fatalf("message_content %v: the role's mention came as %+v; want a mention opening thread %s, text %q", content, ev, msg, want)
		}
		if _, err := c.Post(t.Context(), connectors.Dest{Platform: Platform, Workspace: guild, Channel: ch, Thread: msg}, connectors.Message{Text: "Looking."}); err != nil {
			t.Fatal(err)
		}
		if got, ok := f.Channel(msg); !ok || got.Type != discordtest.TypeThread || got.ParentID != ch {
			t.Errorf("message_content %v: no thread from the message: %+v", content, got)
		}

		f.MentionRole(alice, th, role, "and the disks?")
		ev = next(t, events, connectors.EventMessage)
		if ev.Channel != ch || ev.Thread != th || !ev.Mention {
			t.Errorf("message_content %v: the role's mention in a thread came as %+v; want a mention in thread %s", content, ev, th)
		}
	}
}

// A role the bot holds besides its own (an @oncall that pings many people)
// is not the bot: its mention in a channel opens nothing, and in a thread
// it is a message to others (MentionsOthers), never a mention of the bot.
func TestOtherRoleMentionIsNotForTheBot(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.MessageContentAllowed = true
	ch := f.AddChannel(guild, "ops")
	th := f.AddThread(ch, "incident")
	oncall := f.AddRole(guild, "oncall")
	alice := f.NewUser("alice")
	_, events := started(t, f, Config{MessageContent: true})
	f.MentionRole(alice, ch, oncall, "web-1 is down")
	f.MentionRole(alice, th, oncall, "can you look?")
	f.Mention(alice, ch, "last")
	var got []connectors.Event
	for {
		ev := next(t, events, connectors.EventMessage)
		if ev.Text == "last" {
			break
		}
		got = append(got, ev)
	}
	if len(got) != 1 || got[0].Thread != th || got[0].Mention || !got[0].MentionsOthers {
		t.Errorf("@oncall came as %+v; want only the thread's message, not a mention, to others", got)
	}
}

// The bot's role is learnt from the gateway as it changes: kicked and
// invited again, the bot has a new role and the old one is gone; invited
// without permissions it has none until someone authorizes it again.
func TestBotRoleFollowsTheGuild(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.MessageContentAllowed = true
	const bare = "1000000000000000009"
	f.JoinWithoutRole(bare)
	ch, other := f.AddChannel(guild, "ops"), f.AddChannel(bare, "ops")
	old := f.BotRole(guild)
	alice := f.NewUser("alice")
	_, events := started(t, f, Config{MessageContent: true})

	renewed := f.Reinvite(guild)
	f.MentionRole(alice, ch, old, "old role")
	f.MentionRole(alice, ch, renewed, "new role")
	if ev := next(t, events, connectors.EventMessage); ev.Text != "new role" || !ev.Mention {
		t.Errorf("after a new invite, the first mention was %+v; want the new role's", ev)
	}

	authorized := f.Reauthorize(bare)
	f.MentionRole(alice, other, authorized, "authorized")
	if ev := next(t, events, connectors.EventMessage); ev.Text != "authorized" || !ev.Mention || ev.Workspace != bare {
		t.Errorf("after the role was made, its mention came as %+v", ev)
	}
}

// A direct message has no roles: it stays a session of its own, whatever
// the guilds' roles.
func TestDirectMessageWithGuildRoles(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.AddChannel(guild, "ops")
	dm := f.AddDM()
	alice := f.NewUser("alice")
	_, events := started(t, f, Config{})
	f.Say(alice, dm, "help")
	if ev := next(t, events, connectors.EventMessage); ev.Channel != dm || ev.Thread != dm || !ev.Mention || ev.Text != "help" {
		t.Errorf("the DM came as %+v", ev)
	}
}

// The bot's role follows each guild event as Discord sends it: an
// outage's GUILD_CREATE or GUILD_DELETE (unavailable) keeps what is known,
// the bot removed (GUILD_DELETE) or its role deleted forgets it, and
// another bot's managed role or a plain role is never the bot's.
func TestBotRolesFollowGuildEvents(t *testing.T) {
	t.Parallel()
	const bot, g = "900", "100"
	create := `{"id":"100","roles":[{"id":"100","name":"@everyone"},{"id":"7","name":"other","managed":true,"tags":{"bot_id":"800"}},{"id":"5","name":"opsbot","managed":true,"tags":{"bot_id":"900"}}]}`
	steps := []struct {
		typ, d, want string
	}{
		{"GUILD_CREATE", create, "5"},
		{"GUILD_CREATE", `{"id":"100","unavailable":true}`, "5"},
		{"GUILD_DELETE", `{"id":"100","unavailable":true}`, "5"},
		{"GUILD_ROLE_UPDATE", `{"guild_id":"100","role":{"id":"7","tags":{"bot_id":"800"}}}`, "5"},
		{"GUILD_ROLE_CREATE", `{"guild_id":"100","role":{"id":"8","name":"oncall"}}`, "5"},
		{"GUILD_ROLE_DELETE", `{"guild_id":"100","role_id":"8"}`, "5"},
		{"MESSAGE_CREATE", `{"id":"1","guild_id":"100"}`, "5"},
		{"GUILD_DELETE", `{"id":"100"}`, ""},
		{"GUILD_ROLE_CREATE", `{"guild_id":"100","role":{"id":"6","tags":{"bot_id":"900"}}}`, "6"},
		{"GUILD_ROLE_DELETE", `{"guild_id":"100","role_id":"6"}`, ""},
	}
	b := botRoles{byGuild: map[string]string{}}
	for i, s := range steps {
		if err := b.apply(s.typ, []byte(s.d), bot); err != nil {
			t.Fatalf("step %d, %s: %v", i, s.typ, err)
		}
		if got := b.of(g); got != s.want {
			t.Errorf("step %d, after %s %s: the bot's role is %q; want %q", i, s.typ, s.d, got, s.want)
		}
	}
	if len(b.byGuild) != 0 {
		t.Errorf("%d guilds remembered after the role's end; want none", len(b.byGuild))
	}
}
