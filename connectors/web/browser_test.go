package web_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/web"
	"github.com/opsbot/opsbot/connectors/web/testutil"
)

// scriptBot plays the bot in the browser tests. "story" streams an answer
// one edit per step the test allows; "restart …" posts an approval card
// whose click is decided by the clicker's name; "echo …" repeats the text
// in every part of a message.
type scriptBot struct {
	conn   *web.Connector
	steps  chan struct{}
	events chan connectors.Event
	wg     sync.WaitGroup
}

// storyStates are the streamed answer's texts, one per Post or Edit.
var storyStates = []string{
	"Once",
	"Once upon a time",
	"Once upon a time\n```\n$ uptime",
	"Once upon a time\n```\n$ uptime\n 10:00 up 3 days\n```\nThe end.",
}

func startScriptBot(t *testing.T) (*scriptBot, string) {
	t.Helper()
	return startScriptBotWith(t, web.Config{})
}

func startScriptBotWith(t *testing.T, cfg web.Config) (*scriptBot, string) {
	t.Helper()
	conn, err := web.New(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &scriptBot{conn: conn, steps: make(chan struct{}), events: make(chan connectors.Event, 64)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		conn.Start(ctx, func(ctx context.Context, ev connectors.Event) error { b.handle(ctx, ev); return nil })
		close(done)
	}()
	t.Cleanup(func() {
		cancel()
		close(b.steps)
		<-done
		b.wg.Wait()
	})
	select {
	case <-conn.Running():
	case <-done:
		t.Fatal("Start returned before it took the bot's Handler")
	}
	return b, testutil.Serve(t, conn.Handler())
}

func (b *scriptBot) handle(ctx context.Context, ev connectors.Event) {
	b.events <- ev
	var work func(context.Context, connectors.Event) error
	switch {
	case ev.Kind == connectors.EventAction:
		work = b.decide
	case ev.Text == "story":
		work = b.story
	case strings.HasPrefix(ev.Text, "restart "):
		work = b.card
	case strings.HasPrefix(ev.Text, "echo "):
		work = b.echo
	default:
		return
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		if err := work(ctx, ev); err != nil {
			panic(fmt.Sprintf("script bot: %v", err)) // a connector bug: stop loudly
		}
	}()
}

func (b *scriptBot) story(ctx context.Context, ev connectors.Event) error {
	ref, err := b.conn.StartStream(ctx, connectors.Dest{Channel: ev.Channel, Thread: ev.Thread}, connectors.Message{Text: storyStates[0]})
	if err != nil {
		return err
	}
	for _, text := range storyStates[1:] {
		if _, ok := <-b.steps; !ok {
			return nil
		}
		if err := b.conn.Edit(ctx, ref, connectors.Message{Text: text}); err != nil {
			return err
		}
	}
	if _, ok := <-b.steps; !ok {
		return nil
	}
	return b.conn.StopStream(ctx, ref, connectors.Message{Text: storyStates[len(storyStates)-1]})
}

func (b *scriptBot) card(ctx context.Context, ev connectors.Event) error {
	_, err := b.conn.Post(ctx, connectors.Dest{Channel: ev.Channel, Thread: ev.Thread}, approvalCard(ev.User.Name, "Waiting for approval", true))
	return err
}

func approvalCard(requester, status string, buttons bool) connectors.Message {
	m := connectors.Message{
		Text:    "@" + requester + " wants to run a command that needs approval.\n" + status,
		Fields:  []connectors.Field{{Title: "Host", Value: "web-1"}, {Title: "Command", Value: "`systemctl restart nginx`"}},
		Context: "requested by " + requester + " · expires in 15m",
	}
	if buttons {
		m.Buttons = []connectors.Button{
			{ActionID: "approve", Value: "req-1", Label: "Approve", Style: connectors.StylePrimary},
			{ActionID: "deny", Value: "req-1", Label: "Deny", Style: connectors.StyleDanger},
		}
	}
	return m
}

func (b *scriptBot) decide(ctx context.Context, ev connectors.Event) error {
	verb := map[string]string{"approve": "Approved", "deny": "Denied"}[ev.ActionID]
	if err := b.conn.Edit(ctx, ev.Ref, approvalCard("alice", verb+" by "+ev.User.Name, false)); err != nil {
		return err
	}
	return ev.Respond(ctx, "You "+strings.ToLower(verb)+" req-1.")
}

func (b *scriptBot) echo(ctx context.Context, ev connectors.Event) error {
	s := strings.TrimPrefix(ev.Text, "echo ")
	_, err := b.conn.Post(ctx, connectors.Dest{Channel: ev.Channel, Thread: ev.Thread}, connectors.Message{
		Text:    "You said: " + s + "\n```\n" + s + "\n```",
		Fields:  []connectors.Field{{Title: s, Value: s}},
		Context: s,
		Buttons: []connectors.Button{{ActionID: "noop", Value: "x", Label: s}},
	})
	return err
}

func botMessage(ms []testutil.Message) (testutil.Message, bool) {
	for _, m := range ms {
		if m.Bot {
			return m, true
		}
	}
	return testutil.Message{}, false
}

// A mention starts a thread, and the answer grows on the page as the bot
// edits it, then shows as complete.
func TestBrowserAnswerGrows(t *testing.T) {
	bot, url := startScriptBot(t)
	alice := testutil.Open(t, testutil.Browser(t), url, "alice")
	thread := alice.StartThread("@opsbot story")

	ev := <-bot.events
	if ev.Kind != connectors.EventMessage || ev.Text != "story" || !ev.Mention || ev.User.Name != "alice" || ev.Thread != thread {
		t.Fatalf("the bot got %+v, want alice's mention \"story\" in thread %s", ev, thread)
	}
	seen := map[string]bool{}
	for i, want := range storyStates {
		marker := want[strings.LastIndexAny(want, "\n ")+1:]
		ms := alice.WaitFor("state "+fmt.Sprint(i), func(ms []testutil.Message) bool {
			m, ok := botMessage(ms)
			return ok && strings.Contains(m.Text, marker) && !m.Finished
		})
		m, _ := botMessage(ms)
		seen[m.Text] = true
		bot.steps <- struct{}{}
	}
	if len(seen) < 3 {
		t.Errorf("saw %d distinct states of the answer, want at least 3: %v", len(seen), seen)
	}
	ms := alice.WaitFor("the finished answer", func(ms []testutil.Message) bool {
		m, ok := botMessage(ms)
		return ok && m.Finished
	})
	m, _ := botMessage(ms)
	for _, want := range []string{"Once upon a time", "$ uptime\n 10:00 up 3 days", "The end."} {
		if !strings.Contains(m.Text, want) {
			t.Errorf("the finished answer %q lacks %q", m.Text, want)
		}
	}
	if m.Elements["PRE"] != 1 {
		t.Errorf("the code block is not one <pre>: elements %v", m.Elements)
	}
	if ms[0].User != "alice" || ms[0].Text != "@opsbot story" {
		t.Errorf("the thread starts with %+v, want alice's message", ms[0])
	}
}

// Alice asks; Bob, in another browser, approves. The click reaches the bot
// as Bob, the card Alice sees says who decided and loses its buttons, and
// only Bob sees the bot's reply to the click.
func TestBrowserApprovalBySecondUser(t *testing.T) {
	bot, url := startScriptBot(t)
	browser := testutil.Browser(t)
	alice := testutil.Open(t, browser, url, "alice")
	thread := alice.StartThread("@opsbot restart nginx on web-1")
	<-bot.events
	ms := alice.WaitFor("the approval card", func(ms []testutil.Message) bool {
		m, ok := botMessage(ms)
		return ok && len(m.Buttons) == 2
	})
	card, _ := botMessage(ms)
	if card.Fields[1] != "Command: systemctl restart nginx" || !strings.Contains(card.Context, "requested by alice") {
		t.Errorf("the card shows fields %q and context %q", card.Fields, card.Context)
	}

	bob := testutil.Open(t, testutil.NewUser(t, browser), url, "bob")
	bob.OpenThread("ops", thread)
	bob.Click(card.ID, "Approve")

	ev := <-bot.events
	if ev.Kind != connectors.EventAction || ev.User.ID != "bob" || ev.User.Name != "bob" ||
		ev.ActionID != "approve" || ev.Value != "req-1" || ev.Ref.ID != card.ID || ev.Thread != thread {
		t.Fatalf("the click reached the bot as %+v", ev)
	}
	alice.WaitFor("the decided card", func(ms []testutil.Message) bool {
		m, ok := botMessage(ms)
		return ok && strings.Contains(m.Text, "Approved by bob") && len(m.Buttons) == 0
	})
	bob.WaitNotice("You approved req-1.")
	if n := alice.Notices(); len(n) != 0 {
		t.Errorf("alice sees notices %q meant for bob", n)
	}
}

// Markup in a message is shown as text wherever it appears: a person's
// message, the bot's text, code block, field, context and button label.
func TestBrowserShowsMarkupAsText(t *testing.T) {
	_, url := startScriptBot(t)
	alice := testutil.Open(t, testutil.Browser(t), url, "alice")
	const evil = `<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>`
	alice.StartThread(evil)
	alice.Reply("@opsbot echo " + evil)
	ms := alice.WaitFor("the echo", func(ms []testutil.Message) bool {
		m, ok := botMessage(ms)
		return ok && m.Finished
	})
	for _, m := range ms {
		if m.Elements["IMG"] > 0 || m.Elements["SCRIPT"] > 0 {
			t.Errorf("message %s became markup: elements %v", m.ID, m.Elements)
		}
		if !strings.Contains(m.Text, evil) {
			t.Errorf("message %s shows %q, want the text %q", m.ID, m.Text, evil)
		}
	}
	bot, _ := botMessage(ms)
	if bot.Fields[0] != evil+": "+evil || bot.Context != evil || bot.Buttons[0] != evil {
		t.Errorf("the bot's fields %q, context %q, buttons %q are not the text", bot.Fields, bot.Context, bot.Buttons)
	}
	if got := alice.Eval(`String(window.__xss)`); got != `"undefined"` {
		t.Errorf("a message ran script: window.__xss = %s", got)
	}
}

// The name is asked once per browser, and a reload opens the thread the
// address names, fetched anew.
func TestBrowserReloadKeepsNameAndThread(t *testing.T) {
	bot, url := startScriptBot(t)
	alice := testutil.Open(t, testutil.Browser(t), url, "alice")
	thread := alice.StartThread("@opsbot restart nginx")
	<-bot.events
	alice.WaitFor("the card", func(ms []testutil.Message) bool { return len(ms) == 2 })
	if _, err := bot.conn.StartStream(context.Background(), connectors.Dest{Channel: "ops", Thread: thread}, connectors.Message{Text: "posted before the reload"}); err != nil {
		t.Fatal(err)
	}
	alice.Eval(`window.beforeReload = true`)
	alice.Reload()
	if got := alice.Eval(`String(window.beforeReload)`); got != `"undefined"` {
		t.Fatalf("the page was not reloaded: window.beforeReload = %s", got)
	}
	ms := alice.WaitFor("the thread after the reload", func(ms []testutil.Message) bool { return len(ms) == 3 })
	if ms[0].User != "alice" || ms[2].Text != "posted before the reload" {
		t.Errorf("after the reload the thread shows %+v", ms)
	}
	if who := alice.Eval(`document.querySelector('#who').textContent`); who != `"@alice"` {
		t.Errorf("after the reload the page says the user is %s", who)
	}
}

// The page's markdown: what each construct becomes, and that text stays
// text.
func TestBrowserMarkdown(t *testing.T) {
	_, url := startScriptBot(t)
	page := testutil.Open(t, testutil.Browser(t), url, "alice")
	tests := []struct{ in, html string }{
		{"**bold**, *em* and _em_", `<p class="md-p"><strong>bold</strong>, <em>em</em> and <em>em</em></p>`},
		{"snake_case_name; rm *.log *.tmp", `<p class="md-p">snake_case_name; rm *.log *.tmp</p>`},
		{"run `df -h` now", `<p class="md-p">run <code class="md-inline">df -h</code> now</p>`},
		{"```sh\n<b>x</b> & y\n```\nafter", `<pre class="md-code" data-lang="sh"><code>&lt;b&gt;x&lt;/b&gt; &amp; y</code></pre><p class="md-p">after</p>`},
		{"text\n```\nstill streaming", `<p class="md-p">text</p><pre class="md-code"><code>still streaming</code></pre>`},
		{"- one\n- two\n\n1. first", `<ul class="md-list"><li>one</li><li>two</li></ul><ol class="md-list"><li>first</li></ol>`},
		{"• `run` — a command", `<ul class="md-list"><li><code class="md-inline">run</code> — a command</li></ul>`},
		{"# Health\n> quoted", `<div class="md-h">Health</div><blockquote class="md-quote">quoted</blockquote>`},
		{"see https://runbook.example/disk.", `<p class="md-p">see <a href="https://runbook.example/disk" target="_blank" rel="noopener noreferrer">https://runbook.example/disk</a>.</p>`},
		{"[x](javascript:alert(1)) javascript:alert(1)", `<p class="md-p">[x](javascript:alert(1)) javascript:alert(1)</p>`},
		{"ask @bob, not me@host", `<p class="md-p">ask <span class="mention">@bob</span>, not me@host</p>`},
		{"line one\nline two", `<p class="md-p">line one` + "\n" + `line two</p>`},
		{"````\necho '\n```\n' ; rm -rf /srv/*data*\n````", `<pre class="md-code"><code>echo '` + "\n```\n" + `' ; rm -rf /srv/*data*</code></pre>`},
		// A command's output excerpt ("What ran") is folded under a summary.
		{"```output\nline 1\nline 2\n```", `<details class="md-output"><summary>output · 2 lines</summary><pre class="md-code" data-lang="output"><code>line 1` + "\n" + `line 2</code></pre></details>`},
	}
	for _, tt := range tests {
		var got string
		raw := page.Eval(fmt.Sprintf(`(() => { const d = document.createElement('div'); d.appendChild(opsbotMarkdown.render(%s)); return d.innerHTML; })()`, jsString(tt.in)))
		if err := json.Unmarshal([]byte(raw), &got); err != nil || got != tt.html {
			t.Errorf("render %q\n got %s\nwant %s", tt.in, got, tt.html)
		}
	}
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// A bot message with long command output opens at its tail (the newest
// lines are what a person looks for), and the page shows times in the one
// format the approval cards use ("Nov 24 11:12 UTC").
func TestBrowserLongOutputOpensAtItsTailAndTimesHaveOneFormat(t *testing.T) {
	bot, url := startScriptBot(t)
	alice := testutil.Open(t, testutil.Browser(t), url, "alice")
	thread := alice.StartThread("@opsbot restart nginx")
	<-bot.events
	alice.WaitFor("the card", func(ms []testutil.Message) bool { return len(ms) == 2 })
	var out strings.Builder
	for i := 1; i <= 2000; i++ {
		fmt.Fprintf(&out, "%d\n", i)
	}
	if _, err := bot.conn.StartStream(context.Background(), connectors.Dest{Channel: "ops", Thread: thread}, connectors.Message{Text: "```\n" + out.String() + "```"}); err != nil {
		t.Fatal(err)
	}
	alice.WaitFor("the output", func(ms []testutil.Message) bool { return len(ms) == 3 })
	gap := alice.Eval(`(() => { const p = [...document.querySelectorAll('pre.md-code')].pop();
		return p.scrollHeight > p.clientHeight ? p.scrollHeight - p.clientHeight - p.scrollTop : -1; })()`)
	if gap != "0" {
		t.Errorf("long output: %s pixels left below what is shown (-1: it did not overflow), want 0: it opens at its tail", gap)
	}
	when := alice.Eval(`document.querySelector('.msg time').textContent`)
	if !regexp.MustCompile(`^"[A-Z][a-z]{2} \d{1,2} \d{2}:\d{2} \S+"$`).MatchString(when) {
		t.Errorf("a message's time reads %s, want the cards' format like \"Nov 24 11:12 UTC\"", when)
	}
}

// The page asks for one screen of a long channel and a long thread, not
// all of them, and fetches older ones when asked.
func TestBrowserListsOneScreen(t *testing.T) {
	bot, url := startScriptBot(t)
	ctx := context.Background()
	var long connectors.Ref
	for i := range 400 {
		ref, err := bot.conn.Post(ctx, connectors.Dest{Channel: "ops", Thread: ""}, connectors.Message{Text: fmt.Sprint("thread ", i)})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			long = ref
		}
	}
	for i := range 300 {
		bot.conn.Post(ctx, connectors.Dest{Channel: "ops", Thread: long.Thread}, connectors.Message{Text: fmt.Sprint("reply ", i)})
	}
	alice := testutil.Open(t, testutil.Browser(t), url, "alice")
	count := func(sel string) int {
		var n int
		json.Unmarshal([]byte(alice.Eval(`document.querySelectorAll(`+fmt.Sprintf("%q", sel)+`).length`)), &n)
		return n
	}
	threads := count("#thread-list a[data-thread]")
	if threads == 0 || threads > 200 || count("#thread-list button.more") != 1 {
		t.Fatalf("the page lists %d of 400 threads and %d 'older' buttons, want one screen and one button", threads, count("#thread-list button.more"))
	}
	alice.Do(chromedp.Click("#thread-list button.more"),
		chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.querySelectorAll('#thread-list a[data-thread]').length > %d`, threads),
			chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(0)))

	alice.Eval(`location.hash = '#/ops/` + long.Thread + `'`)
	alice.WaitFor("the long thread", func(ms []testutil.Message) bool { return len(ms) > 0 && ms[len(ms)-1].Text == "reply 299" })
	shown := count("#messages .msg")
	if shown >= 301 || count("#messages button.more") != 1 {
		t.Fatalf("the page shows %d of 301 messages and %d 'earlier' buttons, want one screen and one button", shown, count("#messages button.more"))
	}
	alice.Do(chromedp.Click("#messages button.more"))
	ms := alice.WaitFor("earlier messages", func([]testutil.Message) bool { return count("#messages .msg") > shown })
	for i := 1; i < len(ms); i++ {
		if ms[i-1].ID >= ms[i].ID && len(ms[i-1].ID) >= len(ms[i].ID) {
			t.Fatalf("messages out of order after loading earlier ones: %s before %s", ms[i-1].ID, ms[i].ID)
		}
	}
}

// With a personal key the page does not ask for a name: it shows the one
// the key belongs to, and posts go out under it.
func TestBrowserPersonalKeyNamesThePerson(t *testing.T) {
	sum := sha256.Sum256([]byte("carol's key"))
	bot, url := startScriptBotWith(t, web.Config{Users: []web.User{{Name: "carol", KeySHA256: hex.EncodeToString(sum[:])}}})
	tab := testutil.Open(t, testutil.Browser(t), url, "someone")
	tab.Eval(`document.cookie = 'opsbot_key=' + encodeURIComponent("carol's key") + '; path=/'`)
	tab.Reload() // fails if the page asks for a name
	if who := tab.Eval(`document.querySelector('#who').textContent`); who != `"@carol"` {
		t.Errorf("the page shows %s as the user, want @carol", who)
	}
	tab.StartThread("@opsbot echo hi")
	if ev := <-bot.events; ev.User.ID != "carol" {
		t.Errorf("the post reached the bot as %q, want carol", ev.User.ID)
	}
}

// A notice (the toast after Approve, Stop or Deny) never covers a control:
// a click on Reply, or any button, while it shows reaches that control.
func TestBrowserNoticeCoversNoControl(t *testing.T) {
	bot, url := startScriptBot(t)
	browser := testutil.Browser(t)
	alice := testutil.Open(t, browser, url, "alice")
	alice.StartThread("@opsbot restart nginx on web-1")
	<-bot.events
	ms := alice.WaitFor("the approval card", func(ms []testutil.Message) bool {
		m, ok := botMessage(ms)
		return ok && len(m.Buttons) == 2
	})
	card, _ := botMessage(ms)
	alice.Click(card.ID, "Deny")
	<-bot.events
	alice.WaitNotice("You denied req-1.")
	// Each control's centre, where a click lands, is the control's own.
	covered := alice.Eval(`[...document.querySelectorAll('button, textarea, input, select, a[href]')]
		.filter(el => !el.closest('#notices') && el.offsetParent !== null)
		.filter(el => { const r = el.getBoundingClientRect(); if (r.width === 0 || r.height === 0) return false;
			const x = r.left + r.width / 2, y = r.top + r.height / 2;
			if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) return false;
			const hit = document.elementFromPoint(x, y); return hit && hit.closest('#notices') !== null; })
		.map(el => el.textContent || el.placeholder || el.tagName)`)
	if covered != "[]" {
		t.Errorf("a notice covers %s", covered)
	}
	// Nor does it hide one from sight: no notice's box meets a control's
	// (the Reply button sat under the toast).
	overlapped := alice.Eval(`(() => {
		const notices = [...document.querySelectorAll('#notices .notice')].map(n => n.getBoundingClientRect());
		const meets = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
		return [...document.querySelectorAll('button, textarea, input, select, a[href]')]
			.filter(el => el.offsetParent !== null)
			.filter(el => notices.some(n => meets(n, el.getBoundingClientRect())))
			.map(el => el.textContent || el.placeholder || el.tagName);
	})()`)
	if n := alice.Eval(`document.querySelectorAll('#notices .notice').length`); n == "0" || overlapped != "[]" {
		t.Errorf("%s notices; the notice hides %s", n, overlapped)
	}
	alice.Reply("thanks")
	if ev := <-bot.events; ev.Text != "thanks" {
		t.Errorf("the reply reached the bot as %q", ev.Text)
	}
}

// A long path in a card's field (the Directory of an approval) wraps after
// a '/' (or a name's own hyphen), never inside a name.
func TestBrowserLongPathWrapsAtSlashes(t *testing.T) {
	bot, url := startScriptBot(t)
	alice := testutil.Open(t, testutil.Browser(t), url, "alice")
	const dir = "/srv/deployments/production/releases/20261127-2100/current/application/config/nginx-sites-enabled"
	alice.StartThread("@opsbot echo " + dir)
	<-bot.events
	alice.WaitFor("the answer", func(ms []testutil.Message) bool { _, ok := botMessage(ms); return ok })
	// The field's text, line by line as laid out: a line begins where a
	// character sits lower than the one before it.
	raw := alice.Eval(`(() => {
		const dd = document.querySelector('.msg.bot .fields dd');
		const lines = [];
		let top = null;
		const walker = document.createTreeWalker(dd, NodeFilter.SHOW_TEXT);
		while (walker.nextNode()) {
			const n = walker.currentNode;
			for (let i = 0; i < n.data.length; i++) {
				const r = document.createRange();
				r.setStart(n, i);
				r.setEnd(n, i + 1);
				const box = r.getBoundingClientRect();
				if (top === null || box.top > top + 2) { lines.push(''); top = box.top; }
				lines[lines.length - 1] += n.data[i];
			}
		}
		return lines;
	})()`)
	var lines []string
	if err := json.Unmarshal([]byte(raw), &lines); err != nil {
		t.Fatalf("the field's lines: %s: %v", raw, err)
	}
	if len(lines) < 2 || strings.Join(lines, "") != dir {
		t.Fatalf("the field shows %q; want %q wrapped", lines, dir)
	}
	for _, l := range lines[:len(lines)-1] {
		if !strings.HasSuffix(l, "/") && !strings.HasSuffix(l, "-") {
			t.Errorf("a line of the path ends inside a name: %q (all: %q)", l, lines)
		}
	}
	if copied := alice.Eval(`document.querySelector('.msg.bot .fields dd').textContent`); copied != jsString(dir) {
		t.Errorf("the field's text is %s; want the path as it is", copied)
	}
}

// The bot's status symbols (⏹, 🔔) do not depend on an emoji font (this
// machine has none: each would show as a box): the page draws them, names
// them in words, and keeps the character for copying; a button's text is
// a word.
func TestBrowserSymbolsNeedNoEmojiFont(t *testing.T) {
	bot, url := startScriptBot(t)
	alice := testutil.Open(t, testutil.Browser(t), url, "alice")
	alice.StartThread("@opsbot echo ⏹ Stop 🔔")
	<-bot.events
	alice.WaitFor("the answer", func(ms []testutil.Message) bool { _, ok := botMessage(ms); return ok })
	raw := alice.Eval(`(() => {
		const msg = document.querySelector('.msg.bot');
		const body = msg.querySelector('.msg-body');
		const drawn = [...body.querySelectorAll('.sym')].map(s => {
			const st = getComputedStyle(s);
			const mask = st.maskImage || st.webkitMaskImage;
			return { label: s.getAttribute('aria-label'), glyphHidden: st.color === 'rgba(0, 0, 0, 0)', drawn: mask.startsWith('url(') && st.width !== '0px' };
		});
		return { drawn, text: body.textContent, button: msg.querySelector('.actions button').textContent };
	})()`)
	var got struct {
		Drawn []struct {
			Label       string
			GlyphHidden bool
			Drawn       bool
		}
		Text, Button string
	}
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	if len(got.Drawn) != 2 || got.Drawn[0].Label != "stopped" || got.Drawn[1].Label != "notice" {
		t.Fatalf("the symbols shown: %+v; want ⏹ and 🔔 drawn and named", got.Drawn)
	}
	for _, d := range got.Drawn {
		if !d.GlyphHidden || !d.Drawn {
			t.Errorf("%q: the font's glyph hidden %v, drawn by the page %v", d.Label, d.GlyphHidden, d.Drawn)
		}
	}
	if !strings.Contains(got.Text, "⏹") || !strings.Contains(got.Text, "🔔") {
		t.Errorf("the text %q lost its symbols (copying it would)", got.Text)
	}
	if !regexp.MustCompile(`[A-Za-z]{3,}`).MatchString(got.Button) {
		t.Errorf("the button reads %q: no word without an emoji font", got.Button)
	}
}
