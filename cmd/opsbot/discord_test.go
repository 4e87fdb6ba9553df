package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/connectors/discord/discordtest"
)

// Discord end to end: the real store, policy, gate and local runner behind
// the Discord connector, against the fake Discord.

// discordToken has the shape of a bot token.
const discordToken = "MTEwMDAwMDAwMDAwMDAwMDAwMQ.GhT3xq.k9Vz2pLqR8mW4nXc7YbJd1sFg0Ua5TiOeZrQwE"

// discordWait bounds a wait for the bot: a guard against a hang, not a pace.
const discordWait = 60 * time.Second

// discordGuild is the fake's guild.
const discordGuild = "1000000000000000001"

// startDiscordBot runs the bot with the Discord connector on fake and more
// config appended.
func startDiscordBot(t *testing.T, fake *discordtest.Fake, more string) {
	t.Helper()
	startBot(t, fmt.Sprintf("discord:\n  token: %s\n  api_url: %s\n", discordToken, fake.URL)+more, runHooks{})
}

// waitThread waits until thread shows a bot message containing every one
// of want, and returns the thread's messages.
func waitThread(t *testing.T, fake *discordtest.Fake, thread string, want ...string) []discordtest.Message {
	t.Helper()
	ok := fake.Wait(discordWait, func(f *discordtest.Fake) bool {
		text := f.ThreadTextLocked(thread)
		for _, w := range want {
			if !strings.Contains(text, w) {
				return false
			}
		}
		return true
	})
	if !ok {
		t.Fatalf("thread %s never showed %q; it shows:\n%s", thread, want, botText(fake.Messages(thread)))
	}
	return fake.Messages(thread)
}

func botText(ms []discordtest.Message) string {
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, "[%s bot=%v ephemeral=%v] %s\n", m.ID, m.Bot, m.Ephemeral, m.Content)
	}
	return b.String()
}

// A mention in a text channel opens a thread from that message, named
// from the question, and `run local uptime`'s real output lands in it.
func TestDiscordMentionRunsUptimeInAThread(t *testing.T) {
	t.Parallel()
	fake := discordtest.New(t, discordToken)
	ch := fake.AddChannel(discordGuild, "ops")
	alice := fake.NewUser("alice")
	startDiscordBot(t, fake, "")

	msg := fake.Mention(alice, ch, "run local uptime")
	ms := waitThread(t, fake, msg, "load average", "`uptime` on local: exit 0")
	thread, ok := fake.Channel(msg)
	if !ok || thread.Type != discordtest.TypeThread || thread.ParentID != ch || thread.Name != "run local uptime" {
		t.Errorf("the thread is %+v (found %v); want a public thread of channel %s named after the question", thread, ok, ch)
	}
	for _, m := range fake.Messages(ch) {
		if m.Bot {
			t.Errorf("the bot wrote in the channel itself, not in the thread: %q", m.Content)
		}
	}
	if len(ms) == 0 {
		t.Fatal("no message in the thread")
	}
}

// Typing "@opsbot", Discord offers the bot and its managed role of the same
// name; a person who picks the role addresses the bot all the same: the
// message opens a thread named from the question (the role's mention taken
// out) and runs, and `help` is answered.
func TestDiscordRoleMentionRunsInAThread(t *testing.T) {
	t.Parallel()
	fake := discordtest.New(t, discordToken)
	fake.MessageContentAllowed = true
	ch := fake.AddChannel(discordGuild, "ops")
	role := fake.BotRole(discordGuild)
	alice := fake.NewUser("alice")
	startDiscordBot(t, fake, "  message_content: true\n")

	msg := fake.MentionRole(alice, ch, role, "run local uptime")
	waitThread(t, fake, msg, "load average", "`uptime` on local: exit 0")
	if thread, ok := fake.Channel(msg); !ok || thread.ParentID != ch || thread.Name != "run local uptime" {
		t.Errorf("the thread is %+v (found %v); want one of channel %s named after the question", thread, ok, ch)
	}
	help := fake.MentionRole(alice, ch, role, "help")
	waitThread(t, fake, help, "Mention me with a question")
}

// approvalCard waits for the approval card in thread and returns it with
// its Approve button's custom_id.
func approvalCard(t *testing.T, fake *discordtest.Fake, thread string) (discordtest.Message, string) {
	t.Helper()
	var card discordtest.Message
	var approve string
	ok := fake.Wait(discordWait, func(f *discordtest.Fake) bool {
		for _, m := range f.MessagesLocked(thread) {
			if b := f.ButtonsLocked(m.ID); m.Bot && strings.HasPrefix(m.Content, "**Approval needed**") && len(b) >= 2 { // Approve, Deny (and Approve similar)
				card, approve = m, b[0]
				return true
			}
		}
		return false
	})
	if !ok {
		t.Fatalf("no approval card in thread %s:\n%s", thread, botText(fake.Messages(thread)))
	}
	if !strings.HasPrefix(approve, "approve:") {
		t.Fatalf("the card's first button is %q; want Approve", approve)
	}
	if !strings.Contains(string(card.Components), `"style":4`) {
		t.Errorf("the card's Deny button is not the danger style: %s", card.Components)
	}
	return card, approve
}

// waitEphemeral waits for an ephemeral message to u in thread containing
// want.
func waitEphemeral(t *testing.T, fake *discordtest.Fake, thread string, u discordtest.User, want string) {
	t.Helper()
	ok := fake.Wait(discordWait, func(f *discordtest.Fake) bool {
		return slices.ContainsFunc(f.MessagesLocked(thread), func(m discordtest.Message) bool {
			return m.Ephemeral && m.For == u.ID && strings.Contains(m.Content, want)
		})
	})
	if !ok {
		t.Fatalf("%s was never told %q alone; thread:\n%s", u.Name, want, botText(fake.Messages(thread)))
	}
}

// A risky command waits on its card: the requester's own click is refused
// to her alone, an approver by role approves, the command runs once, and
// a replay of that click (a RESUME's copy: same interaction id) runs
// nothing.
func TestDiscordRiskyCommandApprovedByRoleRunsOnce(t *testing.T) {
	t.Parallel()
	fake := discordtest.New(t, discordToken)
	ch := fake.AddChannel(discordGuild, "ops")
	oncall := fake.NewRole()
	alice, bob := fake.NewUser("alice"), fake.NewUser("bob", oncall)
	startDiscordBot(t, fake, fmt.Sprintf("approvals:\n  approvers:\n    - discord:\n        roles: [%q]\n", oncall))

	target := filepath.Join(t.TempDir(), "ran")
	command := "echo ran >> " + target
	thread := fake.Mention(alice, ch, "run local "+command)
	card, approve := approvalCard(t, fake, thread)

	click := fake.Click(alice, card.ID, approve)
	waitEphemeral(t, fake, thread, alice, "you asked for this command")
	if inTime, typ := fake.Acked(click); !inTime || typ != 6 {
		t.Errorf("alice's click acknowledged in time: %v, type %d; want a deferred update (6) within 3 s", inTime, typ)
	}
	if _, err := os.Stat(target); err == nil {
		t.Fatal("the command ran on alice's own approval")
	}

	bobs := fake.Click(bob, card.ID, approve)
	waitThread(t, fake, thread, "exit 0")
	if inTime, typ := fake.Acked(bobs); !inTime || typ != 6 {
		t.Errorf("bob's click acknowledged in time: %v, type %d", inTime, typ)
	}
	decided := fake.Wait(discordWait, func(f *discordtest.Fake) bool {
		m, _ := f.MessageLocked(card.ID)
		return strings.Contains(m.Content, "approved by <@"+bob.ID+">") && len(f.ButtonsLocked(card.ID)) == 0
	})
	if !decided {
		m, _ := fake.Message(card.ID)
		t.Errorf("the card after bob's approval: %q with buttons %q", m.Content, fake.Buttons(card.ID))
	}

	// The replay, then a fresh click that the bot answers: the inbox takes
	// events in the order they were recorded, so once the fresh one is
	// answered the replay has been handled.
	fake.Replay(bobs)
	if !fake.Wait(discordWait, func(f *discordtest.Fake) bool { return countCalls(f, "POST /interactions/:id/:id/callback") >= 3 }) {
		t.Fatal("the replayed click was never handed on")
	}
	fake.Click(bob, card.ID, approve)
	waitEphemeral(t, fake, thread, bob, "already")
	data, err := os.ReadFile(target)
	if err != nil || string(data) != "ran\n" {
		t.Errorf("the command's file holds %q (%v); want one run", data, err)
	}
	runs := 0
	for _, m := range fake.Messages(thread) {
		if m.Bot && strings.Contains(m.Content, "exit 0") {
			runs++
		}
	}
	if runs != 1 {
		t.Errorf("%d outputs in the thread; want 1:\n%s", runs, botText(fake.Messages(thread)))
	}
}

func countCalls(f *discordtest.Fake, route string) int {
	n := 0
	for _, c := range f.CallsLocked() {
		if c.Route == route {
			n++
		}
	}
	return n
}

// In a direct message Discord sends no member and so no roles: a person
// who is an approver by role alone may not approve there, even with
// approvals.allow_self_approval.
func TestDiscordRoleOnlyApproverRefusedInADM(t *testing.T) {
	t.Parallel()
	fake := discordtest.New(t, discordToken)
	oncall := fake.NewRole()
	carol := fake.NewUser("carol", oncall)
	dm := fake.AddDM()
	startDiscordBot(t, fake, fmt.Sprintf("approvals:\n  allow_self_approval: true\n  approvers:\n    - discord:\n        roles: [%q]\n", oncall))

	target := filepath.Join(t.TempDir(), "ran")
	fake.Mention(carol, dm, "run local touch "+target)
	card, approve := approvalCard(t, fake, dm)
	fake.Click(carol, card.ID, approve)
	waitEphemeral(t, fake, dm, carol, "not an approver")
	if _, err := os.Stat(target); err == nil {
		t.Error("the command ran on a role-only approver's click in a DM")
	}
}

// The gateway drops while an answer is under way: the session resumes (no
// new IDENTIFY), the answer completes, and a mention made while the
// connection was down is replayed at RESUME and answered.
func TestDiscordGatewayDropMidAnswer(t *testing.T) {
	t.Parallel()
	fake := discordtest.New(t, discordToken)
	ch := fake.AddChannel(discordGuild, "ops")
	alice := fake.NewUser("alice")
	startDiscordBot(t, fake, "")

	gate := filepath.Join(t.TempDir(), "go")
	first := fake.Mention(alice, ch, fmt.Sprintf("run local while [ ! -e %s ]; do sleep 0.1; done; echo first-done", gate))
	waitThread(t, fake, first, "while") // the answer is under way
	fake.Drop()
	second := fake.Mention(alice, ch, "run local echo second-done")
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitThread(t, fake, first, "first-done")
	waitThread(t, fake, second, "second-done")
	if g := fake.Gateway(); g.Identifies != 1 || g.Resumes != 1 {
		t.Errorf("gateway: %+v; want the session resumed, not identified again", g)
	}
}

// An agent answer streams into the thread by edits of one message: each
// piece the model sends shows before the next is sent, and two edits of
// the message are at least a second apart.
func TestDiscordAgentAnswerStreamsByEdits(t *testing.T) {
	t.Parallel()
	fake := discordtest.New(t, discordToken)
	ch := fake.AddChannel(discordGuild, "ops")
	alice := fake.NewUser("alice")
	pieces := []string{"The disks", " are fine:", " 41% used", " on web-1."}
	next := make(chan struct{})
	llm := &fakeLLM{t: t, say: pieces, next: next}
	startDiscordBot(t, fake, fmt.Sprintf("agent:\n  provider: openai\n  base_url: %q\n  api_key: test-key\n  model: fake-model\n", llm.serve(t)))

	thread := fake.Mention(alice, ch, "how are the disks?")
	var answer string
	for i := range pieces {
		next <- struct{}{}
		want := strings.Join(pieces[:i+1], "")
		ok := fake.Wait(discordWait, func(f *discordtest.Fake) bool {
			for _, m := range f.MessagesLocked(thread) {
				if m.Bot && strings.HasPrefix(m.Content, want) {
					answer = m.ID
					return true
				}
			}
			return false
		})
		if !ok {
			t.Fatalf("piece %d never showed; thread:\n%s", i, botText(fake.Messages(thread)))
		}
	}
	m, _ := fake.Message(answer)
	if len(m.Edits) < len(pieces)-1 {
		t.Errorf("the answer was edited %d times; want it to grow by edits (≥%d)", len(m.Edits), len(pieces)-1)
	}
	prev := m.Created
	for _, e := range m.Edits {
		// Measured where the fake received them: the bot spaces its edits
		// by a second; the network may bring one a little late and the
		// next on time.
		if gap := e.Sub(prev); gap < 800*time.Millisecond {
			t.Errorf("two updates of the answer %s apart; want ≤1 edit a second", gap)
		}
		prev = e
	}
}

// The Discord connector's REST calls are counted by route, ids collapsed.
func TestDiscordAPICallsAreCounted(t *testing.T) {
	t.Parallel()
	fake := discordtest.New(t, discordToken)
	ch := fake.AddChannel(discordGuild, "ops")
	alice := fake.NewUser("alice")
	base := startBot(t, fmt.Sprintf("discord:\n  token: %s\n  api_url: %s\n", discordToken, fake.URL), runHooks{})
	waitThread(t, fake, fake.Mention(alice, ch, "run local uptime"), "load average")
	_, body := get(t, base+"/metrics")
	for _, want := range []string{
		`opsbot_platform_api_requests_total{method="POST /channels/:id/messages",platform="discord",status="200"}`,
		`opsbot_platform_api_requests_total{method="GET /users/@me",platform="discord",status="200"}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(body, ch) {
		t.Error("/metrics names a channel id")
	}
}

// config check says what is wrong with the discord section in words, at
// its line; the token is one of the redactor's secrets.
func TestDiscordConfigCheck(t *testing.T) {
	t.Parallel()
	cases := []struct{ yaml, want string }{
		{"discord:\n  token: Bot abc.def.ghi\n", `c.yaml:2: discord.token: starts with "Bot ": give the token alone, opsbot adds the prefix`},
		{"discord:\n  token: abc\n  api_url: discord.com\n", `c.yaml:3: discord.api_url: "discord.com" is not a web address: use https://discord.com/ or your REST proxy's address`},
		{"discord:\n  token: ${DISCORD_BOT_TOKEN}\n", "c.yaml:2: discord.token: environment variable DISCORD_BOT_TOKEN is not set: export it, or write ${DISCORD_BOT_TOKEN:-default}"},
	}
	for _, c := range cases {
		_, err := parseConfig("c.yaml", []byte(c.yaml), func(string) (string, bool) { return "", false })
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: %v\nwant %s", c.yaml, err, c.want)
		}
	}
	cfg, err := parseConfig("c.yaml", []byte("discord:\n  token: ${T}\n"), func(string) (string, bool) { return discordToken, true })
	if err != nil {
		t.Fatal(err)
	}
	if out := cfg.redactor().String("token " + discordToken); strings.Contains(out, discordToken) {
		t.Errorf("the redactor does not know discord.token: %q", out)
	}
}
