package bot

import (
	"fmt"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
)

// reply is a message in a thread without a mention of the bot, as a
// connector delivers it; others says it mentions someone else.
func (h *harness) reply(user, thread, text string, others bool) {
	h.deliver(connectors.Event{ID: fmt.Sprintf("ev%d", eventSeq.Add(1)), Kind: connectors.EventMessage, Platform: "web",
		Channel: "ops", Thread: thread, User: connectors.User{ID: user, Name: user}, Text: text, MentionsOthers: others})
}

// absent fails the test when the thread shows s. Events are routed in the
// order they came and a thread's work runs in order, so once the answer
// to a later mention shows, an earlier message taken for the bot would
// have shown its answer too.
func (h *harness) absent(thread, s, why string) {
	h.t.Helper()
	if h.has(thread, s)() {
		h.t.Errorf("%s, but the bot answered it: %s", why, h.dump())
	}
}

// bot.thread_replies: addressed (the default): in a thread where the bot
// has a session, a message is for it without a mention, unless it
// mentions someone else; elsewhere only a mention is.
func TestThreadRepliesAddressed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, approvals.GateConfig{}, nil)
	h.reply("alice", "t1", "run local echo before-any-session", false)
	h.say("alice", "t1", "run local echo first-mention")
	h.eventually("the mention's output", h.has("t1", "first-mention"))
	h.absent("t1", "before-any-session", "a message in a thread without a session is not for the bot")

	h.reply("bob", "t1", "run local echo follow-up-no-mention", false)
	h.eventually("the follow-up's output", h.has("t1", "follow-up-no-mention"))

	h.reply("carol", "t1", "run local echo talking-to-dave", true)
	h.reply("carol", "t2", "run local echo other-thread", false)
	h.say("carol", "t1", "run local echo last-mention")
	h.eventually("the last mention's output", h.has("t1", "last-mention"))
	h.absent("t1", "talking-to-dave", "a message mentioning someone else is for them")
	h.say("carol", "t2", "run local echo t2-mention")
	h.eventually("the second thread's mention", h.has("t2", "t2-mention"))
	h.absent("t2", "other-thread", "a thread without a session takes only mentions")
}

// bot.thread_replies: mentions: only a mention is for the bot, even in its
// own thread.
func TestThreadRepliesMentions(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, botOptions{threadReplies: ThreadRepliesMentions})
	h.say("alice", "t1", "run local echo first-mention")
	h.eventually("the mention's output", h.has("t1", "first-mention"))
	h.reply("alice", "t1", "run local echo no-mention", false)
	h.say("alice", "t1", "run local echo second-mention")
	h.eventually("the second mention's output", h.has("t1", "second-mention"))
	h.absent("t1", "no-mention", "under thread_replies: mentions a reply without a mention is not for the bot")
}

// Someone bot.access leaves out may talk in a thread with the bot: only a
// mention of the bot is refused, and a reply without one is left alone.
func TestThreadReplyFromSomeoneNotAllowedIsQuiet(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, botOptions{access: map[string][]string{"ops": {"alice"}}})
	h.say("alice", "t1", "run local echo first-mention")
	h.eventually("the mention's output", h.has("t1", "first-mention"))
	h.reply("mallory", "t1", "run local echo from-mallory", false)
	h.say("mallory", "t1", "run local echo mallory-mention")
	h.eventually("the refusal of mallory's mention", h.has("t1", "Sorry mallory"))
	refusals := 0
	for _, m := range h.conn.thread("t1") {
		if strings.Contains(m.msg.Text, "may not use opsbot") {
			refusals++
		}
	}
	if refusals != 1 {
		t.Errorf("%d refusals in the thread, want one (of the mention): %s", refusals, h.dump())
	}
	h.absent("t1", "from-mallory", "a reply from someone not allowed is not run")
}

func TestThreadRepliesConfig(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"", "addressed", "mentions"} {
		if err := (Config{ThreadReplies: v}).Validate(); err != nil {
			t.Errorf("thread_replies %q: %v", v, err)
		}
	}
	err := Config{ThreadReplies: "always"}.Validate()
	if err == nil || err.Error() != `thread_replies: "always" is not a choice: use addressed (a message in a thread with the bot is for it unless it mentions someone else) or mentions (only messages that mention the bot)` {
		t.Errorf("thread_replies always: %v", err)
	}
}
