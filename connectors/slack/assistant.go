package slack

import (
	"context"
	"sync"

	"github.com/slack-go/slack"

	"github.com/opsbot/opsbot/approvals/redact"
	"github.com/opsbot/opsbot/connectors"
)

// Assistant threads: where the app has Slack's Agents & AI Apps feature, a
// person opening the bot's assistant pane starts a thread
// (assistant_thread_started). The connector answers it with suggested
// prompts, and titles the thread from its first question; the status
// while a turn runs is Thinking's (assistant.threads.setStatus). All of
// it is optional: without the feature (or the assistant:write scope)
// Slack refuses these calls, and the bot works as before.

// suggestedPrompts are offered in a new assistant thread (Slack shows up
// to four).
var suggestedPrompts = []slack.AssistantThreadsPrompt{
	{Title: "What's failing on web?", Message: "What's failing on web?"},
	{Title: "Show running jobs", Message: "Show running jobs"},
	{Title: "Summarize this thread", Message: "Summarize this thread"},
}

// maxTitle is the most characters of a question the connector puts in a
// thread's title.
const maxTitle = 80

// AssistantThreadStore keeps the assistant threads people started, so
// that a restart between a thread's start and its first question still
// titles it (Slack says nothing in the question's event of whether it is
// the first). The composition root hands the store's in Options; without
// one the connector keeps them in memory.
type AssistantThreadStore interface {
	// Started records a thread a person started.
	Started(ctx context.Context, channel, thread string) error
	// FirstQuestion reports, once per started thread, that its first
	// question came.
	FirstQuestion(ctx context.Context, channel, thread string) (bool, error)
	// Known reports whether a thread is an assistant thread.
	Known(ctx context.Context, channel, thread string) (bool, error)
}

// memoryThreads is the AssistantThreadStore of a connector without a
// store: a restart forgets them.
type memoryThreads struct{ started, titled sync.Map }

var _ AssistantThreadStore = (*memoryThreads)(nil)

func (m *memoryThreads) Started(_ context.Context, channel, thread string) error {
	m.started.Store(channel+"/"+thread, true)
	return nil
}

func (m *memoryThreads) FirstQuestion(_ context.Context, channel, thread string) (bool, error) {
	k := channel + "/" + thread
	if _, ok := m.started.Load(k); !ok {
		return false, nil
	}
	_, titled := m.titled.LoadOrStore(k, true)
	return !titled, nil
}

func (m *memoryThreads) Known(_ context.Context, channel, thread string) (bool, error) {
	_, ok := m.started.Load(channel + "/" + thread)
	return ok, nil
}

// threadStarted answers assistant_thread_started with the suggested
// prompts, and records the thread for its title.
func (c *Connector) threadStarted(cb callback) {
	t := cb.Event.AssistantThread
	if t.ChannelID == "" || t.ThreadTS == "" {
		return
	}
	if err := c.threads.Started(c.life(), t.ChannelID, t.ThreadTS); err != nil {
		c.log.Warn("slack: assistant thread not recorded; its title may be lost", "channel", t.ChannelID, "err", err)
	}
	c.courtesy("assistant.threads.setSuggestedPrompts", t.ChannelID, func(ctx context.Context) error {
		return c.api.SetAssistantThreadsSuggestedPromptsContext(ctx, slack.AssistantThreadsSetSuggestedPromptsParameters{
			ChannelID: t.ChannelID, ThreadTS: t.ThreadTS, Prompts: suggestedPrompts})
	})
}

// titleFrom titles an assistant thread from its first question.
func (c *Connector) titleFrom(ev connectors.Event) {
	if ev.Text == "" || !isDM(ev.Channel) {
		return // assistant threads are in the bot's direct messages
	}
	first, err := c.threads.FirstQuestion(c.life(), ev.Channel, ev.Thread)
	if err != nil {
		c.log.Warn("slack: assistant thread not read; not titled", "channel", ev.Channel, "err", err)
	}
	if !first {
		return
	}
	c.courtesy("assistant.threads.setTitle", ev.Channel, func(ctx context.Context) error {
		return c.api.SetAssistantThreadsTitleContext(ctx, slack.AssistantThreadsSetTitleParameters{
			ChannelID: ev.Channel, ThreadTS: ev.Thread, Title: c.title(ev.Text)})
	})
}

// defaultRedactor masks the titles of a connector given no Redact.
var defaultRedactor = sync.OnceValue(func() *redact.Redactor { return redact.New() })

// title is a thread's title from its first question. The title is posted
// by the connector itself, not through the bot's redactor as everything
// else is, so it is masked here: whole, before it is cut, so that a cut
// cannot split a secret into a part the rules no longer know.
func (c *Connector) title(question string) string {
	red := c.opt.Redact
	if red == nil {
		red = defaultRedactor().String
	}
	return truncate(red(question), maxTitle)
}

// life is the context of the connector's own calls: Start's, once
// started.
func (c *Connector) life() context.Context {
	if r := c.dispatch.Load(); r != nil {
		return r.ctx
	}
	return context.Background()
}

// courtesy calls method in the background, within its budget (never
// waiting for it) and the lookups' bound; a refusal (no such feature, no
// scope) is logged, not acted on.
func (c *Connector) courtesy(method, channel string, call func(ctx context.Context) error) {
	ctx := c.life()
	if !c.bud.allow(c.team(), method, channel) {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(ctx, lookupLimit)
		defer cancel()
		if err := c.bud.limited(c.team(), method, channel, call(ctx)); err != nil {
			c.log.Debug("slack: assistant thread call refused", "method", method, "channel", channel, "code", errorCode(err))
		}
	}()
}
