package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// The try-out, as a new user does it: in the web chat, with an
// OpenAI-compatible model that writes its prose as plain markdown, a
// question, an approved fix, then `postmortem`. The model's prose is in
// the document; the timeline has the approval request and decision, its
// people as @alice and @bob and its messages by their web ids; the card
// named no internal directory; and the download is the posted
// postmortem, without asking the model again.
func TestPostmortemInAWebThreadAfterAnApprovedFix(t *testing.T) {
	t.Parallel()
	target := filepath.Join(t.TempDir(), "fixed")
	var proseAsks atomic.Int32
	llm := &fakeLLM{t: t, respond: func(r fakeLLMRequest) (string, string) {
		role, _ := r.last()
		switch {
		case len(r.Tools) == 0: // postmortem's prose: no tools offered
			proseAsks.Add(1)
			return "", "# Impact\nThe site was down for a minute.\n\n# What fixed it\nCreating the missing file.\n\n# Follow-ups\n- alert on the missing file\n"
		case role == "tool":
			return "", "Fixed: the file is there now."
		}
		return "touch " + target, ""
	}}
	base, _ := startBrowserBotWith(t, llm, "approvals:\n  approvers:\n    - web:\n        users: [alice, bob]\n")
	// A second bot in the process, started after: the postmortem reads
	// this bot's store and asks this bot's model, never the last one
	// started (both were once the process's).
	startBrowserBotWith(t, &fakeLLM{t: t, say: []string{"the other bot's answer"}}, "")
	c := &chatClient{t: t, base: base}
	c.listen()
	c.run("alice", "@opsbot the site is down, fix it") // bob approves the touch
	thread := c.threads()[0]
	c.post("/api/messages", map[string]any{"channel": "ops", "thread": thread, "user": "alice", "text": "@opsbot postmortem"})
	c.await("the postmortem", func() bool { return strings.Contains(c.texts(thread), "## Follow-ups") })
	posted := c.texts(thread)
	for _, want := range []string{"## Impact\n\nThe site was down for a minute.", "## What fixed it\n\nCreating the missing file.",
		"— @alice asked for approval to run `touch " + target + "` on local [audit row ", "— @bob approved `touch " + target + "` on local [audit row ",
		"— question: the site is down, fix it [@alice, web message " + thread + "]", "[opsbot, web message m"} {
		if !strings.Contains(posted, want) {
			t.Errorf("the posted postmortem lacks %q:\n%s", want, posted)
		}
	}
	for _, not := range []string{"No model wrote", "web:alice", "web:bob", "[msg #", "[audit #", "voted"} {
		if strings.Contains(posted, not) {
			t.Errorf("the posted postmortem has %q:\n%s", not, posted)
		}
	}
	if id := c.messageWith(thread, "Fixed: the file is there now."); !strings.Contains(posted, "— answer: Fixed: the file is there now. [opsbot, web message "+id+"]") {
		t.Errorf("the answer's entry does not name its message %s:\n%s", id, posted)
	}
	if strings.Contains(c.stream(), `"Directory"`) {
		t.Errorf("a card named the thread's session directory:\n%s", c.stream())
	}
	asks := proseAsks.Load()
	md := c.get("/api/threads/" + thread + "/postmortem.md")
	t.Logf("the downloaded postmortem:\n%s", md)
	if !strings.Contains(md, "The site was down for a minute.") || !strings.Contains(md, "@bob approved") || proseAsks.Load() != asks || asks != 1 {
		t.Errorf("download after %d prose requests (then %d):\n%s", asks, proseAsks.Load(), md)
	}
}

// messageWith is the id of the bot's message in thread whose text has s
// ("" when none does), the postmortem quoting it aside.
func (c *chatClient) messageWith(thread, s string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, m := range c.msgs {
		text := fmt.Sprint(m["text"])
		if m["thread"] == thread && m["bot"] == true && strings.Contains(text, s) && !strings.Contains(text, "— answer:") {
			return id
		}
	}
	return ""
}
