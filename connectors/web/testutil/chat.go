package testutil

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// DefaultWait bounds each wait for the page: a guard against a hung test,
// not a speed requirement.
const DefaultWait = 30 * time.Second

// Chat is one person's tab on the web chat.
type Chat struct {
	t    testing.TB
	ctx  context.Context
	URL  string
	User string
	// Wait bounds each wait for the page (DefaultWait).
	Wait time.Duration
}

// Message is a message as the page shows it.
type Message struct {
	ID   string `json:"id"`
	User string `json:"user"`
	Bot  bool   `json:"bot"`
	// Text is the rendered body as the browser lays it out (innerText).
	Text     string `json:"text"`
	Finished bool   `json:"finished"`
	// Fields are "title: value".
	Fields  []string `json:"fields"`
	Context string   `json:"context"`
	// Buttons are the labels of the buttons shown.
	Buttons []string `json:"buttons"`
	// Elements counts the message's elements by tag name (e.g. "IMG"), to
	// check that nothing in a message became markup.
	Elements map[string]int `json:"elements"`
}

// Open loads the chat at baseURL in tab, picks user as the name when the
// page asks (the first visit of this browser context), and waits until
// the page's event stream is live.
func Open(t testing.TB, tab context.Context, baseURL, user string) *Chat {
	t.Helper()
	c := &Chat{t: t, ctx: tab, URL: baseURL, User: user, Wait: DefaultWait}
	c.Do(chromedp.Navigate(baseURL + "/"))
	// The page asks who it is first; then it asks for a name, or goes live.
	c.waitJS("the page to ask for a name or go live", `document.body.dataset.live === '1' || document.querySelector('#name-dialog').open`)
	if c.Eval(`document.querySelector('#name-dialog').open`) == "true" {
		c.Do(chromedp.SetValue("#name-dialog input", user), chromedp.Click("#name-form button"))
	}
	c.waitJS("the page to go live", `document.body.dataset.live === '1'`)
	return c
}

// Reload reloads the page (the address keeps its channel and thread) and
// waits until it is live again; it fails if the page asks for a name.
func (c *Chat) Reload() {
	c.t.Helper()
	c.Do(chromedp.Reload())
	c.waitJS("the reloaded page to go live", `document.body.dataset.live === '1' || document.querySelector('#name-dialog').open`)
	if c.Eval(`document.querySelector('#name-dialog').open`) == "true" {
		c.t.Fatalf("%s's browser asked for a name again after a reload", c.User)
	}
}

// Context is the tab's chromedp context, for actions of the test's own.
func (c *Chat) Context() context.Context { return c.ctx }

// Do runs actions in the tab, failing the test on an error or after Wait.
func (c *Chat) Do(actions ...chromedp.Action[chromedp.Void]) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.ctx, c.Wait)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		c.t.Fatalf("%s's browser: %v", c.User, err)
	}
}

// Eval evaluates a JavaScript expression and returns its value as JSON.
func (c *Chat) Eval(expr string) string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.ctx, c.Wait)
	defer cancel()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](expr))
	if err != nil {
		c.t.Fatalf("%s's browser: evaluate %s: %v", c.User, expr, err)
	}
	return string(raw)
}

// js quotes s as a JavaScript string literal.
func js(s string) string {
	b, _ := json.Marshal(s) // a string: cannot fail
	return string(b)
}

// waitJS waits for a JavaScript expression to be true. The page checks
// it at once and then on each change of its document (every wait here is
// for something the page shows or an attribute it sets), not on a timer.
func (c *Chat) waitJS(what, expr string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.ctx, c.Wait)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(0))); err != nil {
		c.t.Fatalf("%s's browser: waiting for %s: %v", c.User, what, err)
	}
}

// StartThread posts text as a new thread in the open channel and returns
// the thread's id once the page shows the thread.
func (c *Chat) StartThread(text string) string {
	c.t.Helper()
	before := c.Eval(`location.hash`)
	c.Do(chromedp.SetValue("#new-thread textarea", text), chromedp.Click("#new-thread button"))
	c.waitJS("the new thread to open", fmt.Sprintf(`location.hash !== %s && document.querySelector('#messages .msg') !== null || document.querySelector('#notices .error') !== null`, before))
	c.failOnError("post")
	var id string
	json.Unmarshal([]byte(c.Eval(`location.hash.split('/')[2] || ''`)), &id)
	return id
}

// OpenThread shows a thread of a channel.
func (c *Chat) OpenThread(channel, id string) {
	c.t.Helper()
	c.Eval(fmt.Sprintf(`location.hash = %s`, js("#/"+channel+"/"+id)))
	c.waitJS("thread "+id, fmt.Sprintf(`document.querySelector('#messages .msg[data-id=%q]') !== null`, id))
}

// Reply posts text in the open thread and waits until the post went out.
func (c *Chat) Reply(text string) {
	c.t.Helper()
	c.Do(chromedp.SetValue("#reply textarea", text), chromedp.Click("#reply button"))
	c.waitJS("the reply to go out", `document.querySelector('#reply textarea').value === '' || document.querySelector('#notices .error') !== null`)
	c.failOnError("reply")
}

func (c *Chat) failOnError(what string) {
	c.t.Helper()
	if msg := c.Eval(`(document.querySelector('#notices .error span') || {}).textContent || ''`); msg != `""` {
		c.t.Fatalf("%s's %s failed: %s", c.User, what, msg)
	}
}

// Messages are the messages of the open thread, in order.
func (c *Chat) Messages() []Message {
	c.t.Helper()
	var ms []Message
	raw := c.Eval(messagesJS)
	if err := json.Unmarshal([]byte(raw), &ms); err != nil {
		c.t.Fatalf("decode the page's messages: %v", err)
	}
	return ms
}

const messagesJS = `[...document.querySelectorAll('#messages .msg')].map(e => {
  const elements = {};
  e.querySelectorAll('*').forEach(x => { elements[x.tagName] = (elements[x.tagName] || 0) + 1; });
  return {
    id: e.dataset.id,
    user: e.querySelector('.who').textContent,
    bot: e.classList.contains('bot'),
    text: e.querySelector('.msg-body').innerText,
    finished: e.dataset.finished === 'true',
    fields: [...e.querySelectorAll('.fields > div')].map(f => f.querySelector('dt').textContent + ': ' + f.querySelector('dd').textContent),
    context: (e.querySelector('.context') || {}).textContent || '',
    buttons: [...e.querySelectorAll('.actions button')].map(b => b.textContent),
    elements,
  };
})`

// WaitFor waits until ok accepts the open thread's messages, and returns
// them; what names the wait in the failure. It checks the messages as
// they are, then again each time the page changes them: the browser
// reports each change (a MutationObserver), so nothing is polled.
func (c *Chat) WaitFor(what string, ok func([]Message) bool) []Message {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.ctx, c.Wait)
	defer cancel()
	var ms []Message
	seen := ""
	for {
		raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(changedJS, js(seen)), chromedp.EvalAwaitPromise))
		if err != nil {
			c.t.Fatalf("%s's browser: waited %s for %s (%v); the thread shows %+v", c.User, c.Wait, what, err, ms)
		}
		seen = raw
		if err := json.Unmarshal([]byte(raw), &ms); err != nil {
			c.t.Fatalf("decode the page's messages: %v", err)
		}
		if ok(ms) {
			return ms
		}
	}
}

// changedJS resolves to the open thread's messages (as JSON) once they
// differ from the %s it is given: at once if they already do. Reading
// and observing happen in one turn of the page's event loop, so no change
// can fall between them.
const changedJS = `new Promise(resolve => {
  const seen = %s;
  const read = () => JSON.stringify(` + messagesJS + `);
  const now = read();
  if (now !== seen) { resolve(now); return; }
  const obs = new MutationObserver(() => {
    const now = read();
    if (now !== seen) { obs.disconnect(); resolve(now); }
  });
  obs.observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
})`

// Click clicks the button labelled label on message id.
func (c *Chat) Click(id, label string) {
	c.t.Helper()
	found := c.Eval(fmt.Sprintf(`(() => {
  const b = [...document.querySelectorAll('#messages .msg[data-id=%q] .actions button')].find(b => b.textContent === %s);
  if (b) b.click();
  return !!b;
})()`, id, js(label)))
	if found != "true" {
		c.t.Fatalf("%s's browser: no button %q on message %s", c.User, label, id)
	}
}

// Notices are the texts of the notices the page shows now.
func (c *Chat) Notices() []string {
	c.t.Helper()
	var out []string
	json.Unmarshal([]byte(c.Eval(`[...document.querySelectorAll('#notices .notice span')].map(s => s.textContent)`)), &out)
	return out
}

// WaitNotice waits for a notice containing text.
func (c *Chat) WaitNotice(text string) {
	c.t.Helper()
	c.waitJS("a notice "+text, fmt.Sprintf(`[...document.querySelectorAll('#notices .notice span')].some(s => s.textContent.includes(%s))`, js(text)))
}
