package slack

import (
	"context"
	"sync"

	"github.com/slack-go/slack"

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

// assistantThreads are the assistant threads started and not yet titled,
// keyed channel/thread.
type assistantThreads struct{ untitled sync.Map }

// threadStarted answers assistant_thread_started with the suggested
// prompts, and notes the thread for its title.
func (c *Connector) threadStarted(cb callback) {
	t := cb.Event.AssistantThread
	if t.ChannelID == "" || t.ThreadTS == "" {
		return
	}
	c.assistant.untitled.Store(t.ChannelID+"/"+t.ThreadTS, true)
	c.courtesy("assistant.threads.setSuggestedPrompts", t.ChannelID, func(ctx context.Context) error {
		return c.api.SetAssistantThreadsSuggestedPromptsContext(ctx, slack.AssistantThreadsSetSuggestedPromptsParameters{
			ChannelID: t.ChannelID, ThreadTS: t.ThreadTS, Prompts: suggestedPrompts})
	})
}

// titleFrom titles an assistant thread from its first question.
func (c *Connector) titleFrom(ev connectors.Event) {
	if _, first := c.assistant.untitled.LoadAndDelete(ev.Channel + "/" + ev.Thread); !first || ev.Text == "" {
		return
	}
	c.courtesy("assistant.threads.setTitle", ev.Channel, func(ctx context.Context) error {
		return c.api.SetAssistantThreadsTitleContext(ctx, slack.AssistantThreadsSetTitleParameters{
			ChannelID: ev.Channel, ThreadTS: ev.Thread, Title: truncate(ev.Text, maxTitle)})
	})
}

// courtesy calls method in the background, within its budget (never
// waiting for it) and the lookups' bound; a refusal (no such feature, no
// scope) is logged, not acted on.
func (c *Connector) courtesy(method, channel string, call func(ctx context.Context) error) {
	ctx := context.Background()
	if r := c.dispatch.Load(); r != nil {
		ctx = r.ctx
	}
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
