package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/connectors"
)

// A person's mention starts a thread and reaches the bot; the bot's reply
// and the lists show it.
func TestPostListAndReply(t *testing.T) {
	t.Parallel()
	c, bot := started(t, Config{}, nil)
	h := c.Handler()
	res := say(t, h, "alice", "", "@opsbot run local uptime")
	if res.ID == "" || res.Thread != res.ID || res.Channel != "ops" || !res.ForBot || res.Seq == 0 || res.RequestID == "" {
		t.Fatalf("post answered %+v", res)
	}
	ev := bot.next(t)
	want := connectors.Event{ID: res.ID, Kind: connectors.EventMessage, Platform: "web", Channel: "ops", Thread: res.ID,
		User: connectors.User{ID: "alice", Name: "alice"}, Text: "run local uptime", Mention: true}
	if ev.ID != want.ID || ev.Kind != want.Kind || ev.Platform != want.Platform || ev.Channel != want.Channel ||
		ev.Thread != want.Thread || ev.User.ID != "alice" || ev.User.Name != "alice" || ev.Text != want.Text || !ev.Mention {
		t.Fatalf("the bot got %+v, want %+v", ev, want)
	}
	ref, err := c.StartStream(context.Background(), dest(ev.Channel, ev.Thread), connectors.Message{Text: "up 3 days"})
	if err != nil || ref.Thread != res.Thread || ref.Platform != "web" || ref.Channel != "ops" {
		t.Fatalf("Post: %+v, %v", ref, err)
	}

	chans := decodeBody[struct {
		Channels []channelView
		Seq      uint64
	}](t, call(t, h, "GET", "/api/channels", ""))
	if len(chans.Channels) != 1 || chans.Channels[0].Name != "ops" || chans.Channels[0].Threads != 1 || chans.Seq < res.Seq+1 {
		t.Errorf("channels: %+v", chans)
	}
	threads := decodeBody[struct{ Threads []threadView }](t, call(t, h, "GET", "/api/channels/ops/threads", ""))
	if len(threads.Threads) != 1 || threads.Threads[0].Replies != 1 || threads.Threads[0].Root.Text != "@opsbot run local uptime" {
		t.Errorf("threads: %+v", threads)
	}
	msgs := decodeBody[struct{ Messages []messageView }](t, call(t, h, "GET", "/api/threads/"+res.Thread+"/messages", ""))
	if len(msgs.Messages) != 2 || msgs.Messages[1].Text != "up 3 days" || !msgs.Messages[1].Bot ||
		msgs.Messages[1].User != BotName || msgs.Messages[1].Finished || !msgs.Messages[0].Finished {
		t.Errorf("messages: %+v", msgs)
	}
	one := decodeBody[messageView](t, call(t, h, "GET", "/api/messages/"+ref.ID, ""))
	if one.ID != ref.ID || one.Text != "up 3 days" {
		t.Errorf("message: %+v", one)
	}
	for _, path := range []string{"/api/channels/nope/threads", "/api/threads/m999/messages", "/api/messages/m999", "/api/nope"} {
		if w := call(t, h, "GET", path, ""); w.Code != http.StatusNotFound || decodeBody[apiError](t, w).Error == "" {
			t.Errorf("GET %s: %d %s, want 404 with an error", path, w.Code, w.Body)
		}
	}
}

// Which messages reach the bot, and the text it gets.
func TestMessagesForTheBot(t *testing.T) {
	t.Parallel()
	c, bot := started(t, Config{}, nil)
	h := c.Handler()
	chat := say(t, h, "alice", "", "anyone seen the disk alert?")
	ask := say(t, h, "bob", "", "checking")
	if _, err := c.StartStream(context.Background(), dest("ops", ask.Thread), connectors.Message{Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	// A message without a mention reaches the bot with Mention false; the
	// bot decides by bot.thread_replies, which needs MentionsOthers.
	tests := []struct {
		name, thread, text      string
		forBot, mention, others bool
		want                    string
	}{
		{"no mention, no bot in the thread", chat.Thread, "not me", false, false, false, ""},
		{"a mention in that thread", chat.Thread, "@opsbot df -h please", true, true, false, "df -h please"},
		{"the thread now has the bot", chat.Thread, "and free -m", true, false, false, "and free -m"},
		{"a thread the bot posted in", ask.Thread, "thanks", true, false, false, "thanks"},
		{"someone else mentioned there", ask.Thread, "@bob can you look?", true, false, true, "@bob can you look?"},
		{"the bot and someone else", ask.Thread, "@opsbot tell @bob.", true, true, true, "tell @bob."},
		{"mention mid-text with a comma", "", "hey @OpsBot, check nginx", true, true, false, "hey check nginx"},
		{"mention with a colon, lines kept", "", "@opsbot: run\n```\nls\n```", true, true, false, "run\n```\nls\n```"},
		{"an address is no mention", "", "mail ops@opsbot.dev", false, false, false, ""},
		{"a longer name is no mention", "", "ask @opsbot-staging", false, false, false, ""},
		{"a mention at the end", "", "what is up @opsbot", true, true, false, "what is up"},
	}
	for _, tt := range tests {
		res := say(t, h, "carol", tt.thread, tt.text)
		if res.ForBot != tt.forBot {
			t.Errorf("%s: for_bot %v, want %v", tt.name, res.ForBot, tt.forBot)
		}
		if !tt.forBot {
			bot.none(t)
			continue
		}
		if ev := bot.next(t); ev.Text != tt.want || ev.Mention != tt.mention || ev.MentionsOthers != tt.others || ev.ID != res.ID {
			t.Errorf("%s: the bot got %q (mention %v, others %v, id %s), want %q (mention %v, others %v)",
				tt.name, ev.Text, ev.Mention, ev.MentionsOthers, ev.ID, tt.want, tt.mention, tt.others)
		}
	}
}

func TestPostRefused(t *testing.T) {
	t.Parallel()
	c, _ := started(t, Config{}, nil)
	down := unstarted(t, Config{}, nil)
	long := strings.Repeat("x", c.Limits().MaxText+1)
	tests := []struct {
		name   string
		conn   *Connector
		body   string
		ctype  string
		status int
	}{
		{"no user", c, `{"channel":"ops","text":"hi"}`, "", 400},
		{"the bot's name", c, `{"channel":"ops","user":"OpsBot","text":"hi"}`, "", 400},
		{"a padded name", c, `{"channel":"ops","user":" al","text":"hi"}`, "", 400},
		{"a control character", c, `{"channel":"ops","user":"a\u0007","text":"hi"}`, "", 400},
		{"a long name", c, `{"channel":"ops","user":"` + strings.Repeat("a", 41) + `","text":"hi"}`, "", 400},
		{"no channel", c, `{"user":"al","text":"hi"}`, "", 400},
		{"blank text", c, `{"channel":"ops","user":"al","text":"  "}`, "", 400},
		{"too long", c, `{"channel":"ops","user":"al","text":"` + long + `"}`, "", 400},
		{"an unknown field", c, `{"channel":"ops","user":"al","text":"hi","model":"x"}`, "", 400},
		{"not JSON", c, `channel=ops`, "", 400},
		{"a form post", c, `{"channel":"ops","user":"al","text":"hi"}`, "text/plain", 415},
		{"an unknown channel", c, `{"channel":"dev","user":"al","text":"hi"}`, "", 404},
		{"an unknown thread", c, `{"channel":"ops","thread":"m999","user":"al","text":"hi"}`, "", 404},
		{"a mention while the bot is down", down, `{"channel":"ops","user":"al","text":"@opsbot hi"}`, "", 503},
		{"chat while the bot is down", down, `{"channel":"ops","user":"al","text":"hi all"}`, "", 201},
	}
	for _, tt := range tests {
		w := call(t, tt.conn.Handler(), "POST", "/api/messages", tt.body, func(r *http.Request) {
			if tt.ctype != "" {
				r.Header.Set("Content-Type", tt.ctype)
			}
		})
		if w.Code != tt.status {
			t.Errorf("%s: %d %s, want %d", tt.name, w.Code, w.Body, tt.status)
		}
		if w.Code >= 400 && decodeBody[apiError](t, w).RequestID == "" {
			t.Errorf("%s: the error %s has no request id", tt.name, w.Body)
		}
	}
}

// Every response names its request; a post retried with the same
// X-Request-Id makes one message, and its event goes to the bot again
// with the message's id (the bot drops a copy it has on record, and takes
// one a crash kept from it).
func TestRequestIDs(t *testing.T) {
	t.Parallel()
	c, bot := started(t, Config{}, nil)
	h := c.Handler()
	withID := func(id string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set(HeaderRequestID, id) }
	}
	if got := call(t, h, "GET", "/api/channels", "", withID("plugin-42")).Header().Get(HeaderRequestID); got != "plugin-42" {
		t.Errorf("own request id echoed as %q", got)
	}
	for _, bad := range []string{"", "has space", strings.Repeat("x", 129)} {
		got := call(t, h, "GET", "/api/channels", "", withID(bad)).Header().Get(HeaderRequestID)
		if !strings.HasPrefix(got, "r-") {
			t.Errorf("request id %q replaced by %q, want a new r-…", bad, got)
		}
	}
	body := `{"channel":"ops","user":"alice","text":"@opsbot hello"}`
	first := call(t, h, "POST", "/api/messages", body, withID("retry-1"))
	again := call(t, h, "POST", "/api/messages", body, withID("retry-1"))
	a, b := decodeBody[postResult](t, first), decodeBody[postResult](t, again)
	if first.Code != 201 || again.Code != 200 || a != b || a.RequestID != "retry-1" {
		t.Errorf("retry: %d %+v then %d %+v, want 201 then 200 with the same answer", first.Code, a, again.Code, b)
	}
	if e1, e2 := bot.next(t), bot.next(t); e1.ID != a.ID || e2.ID != a.ID {
		t.Errorf("the events of a post and its retry are %q and %q, want both %q", e1.ID, e2.ID, a.ID)
	}
	bot.none(t)
	if threads, _, _, _ := c.hub.threadList(context.Background(), "ops", page{limit: 50}); len(threads) != 1 {
		t.Errorf("%d threads after a retried post, want 1", len(threads))
	}
	other := decodeBody[postResult](t, call(t, h, "POST", "/api/messages", body, withID("retry-2")))
	if other.ID == a.ID {
		t.Error("a new request id made no new message")
	}
}

// A request id names one post: sent again with another message (a script
// that keeps a fixed id), it is refused with 409 and a reason, not
// answered with the first post's result as if this one had gone out.
func TestRequestIDReusedForAnotherMessage(t *testing.T) {
	t.Parallel()
	c, bot := started(t, Config{}, nil)
	h := c.Handler()
	withID := func(r *http.Request) { r.Header.Set(HeaderRequestID, "my-script-1") }
	first := call(t, h, "POST", "/api/messages", `{"channel":"ops","user":"nightly-job","text":"@opsbot run local uptime"}`, withID)
	if first.Code != http.StatusCreated {
		t.Fatalf("first post: %d %s", first.Code, first.Body)
	}
	bot.next(t)
	for _, body := range []string{
		`{"channel":"ops","user":"nightly-job","text":"@opsbot run local df -h"}`,
		`{"channel":"ops","thread":"` + decodeBody[postResult](t, first).ID + `","user":"nightly-job","text":"@opsbot run local uptime"}`,
	} {
		w := call(t, h, "POST", "/api/messages", body, withID)
		e := decodeBody[apiError](t, w)
		if w.Code != http.StatusConflict || !strings.Contains(e.Error, "my-script-1") || !strings.Contains(e.Error, "new X-Request-Id") {
			t.Errorf("%s with a used request id: %d %s, want 409 saying to send a new X-Request-Id", body, w.Code, w.Body)
		}
	}
	bot.none(t)
	if threads, _, _, _ := c.hub.threadList(context.Background(), "ops", page{limit: 50}); len(threads) != 1 || threads[0].Replies != 0 {
		t.Errorf("threads after refused posts: %+v, want the first post only", threads)
	}
	again := call(t, h, "POST", "/api/messages", `{"channel":"ops","user":"nightly-job","text":"@opsbot run local uptime"}`, withID)
	if again.Code != http.StatusOK || decodeBody[postResult](t, again) != decodeBody[postResult](t, first) {
		t.Errorf("the same post retried after a refused one: %d %s, want 200 and the first answer", again.Code, again.Body)
	}
}

func TestModels(t *testing.T) {
	t.Parallel()
	c := unstarted(t, Config{}, nil)
	if got := call(t, c.Handler(), "GET", "/api/models", "").Body.String(); got != `{"models":[]}`+"\n" {
		t.Errorf("no Models: %s", got)
	}
	c.Models = func() []string { return []string{"claude-sonnet-4-5", "gpt-5"} }
	got := decodeBody[struct{ Models []string }](t, call(t, c.Handler(), "GET", "/api/models", ""))
	if strings.Join(got.Models, ",") != "claude-sonnet-4-5,gpt-5" {
		t.Errorf("models: %v", got.Models)
	}
}

// The page and its files are served with a policy that runs only them.
func TestPage(t *testing.T) {
	t.Parallel()
	h := unstarted(t, Config{}, nil).Handler()
	tests := []struct {
		path, ctype, contains string
		status                int
	}{
		{"/", "text/html", `<script src="/assets/app.js"`, 200},
		{"/assets/app.js", "text/javascript", "EventSource", 200},
		{"/assets/markdown.js", "text/javascript", "textContent", 200},
		{"/assets/app.css", "text/css", "--bg", 200},
		{"/nope", "", "", 404},
	}
	for _, tt := range tests {
		w := call(t, h, "GET", tt.path, "")
		if w.Code != tt.status || !strings.HasPrefix(w.Header().Get("Content-Type"), tt.ctype) || !strings.Contains(w.Body.String(), tt.contains) {
			t.Errorf("GET %s: %d %s", tt.path, w.Code, w.Header().Get("Content-Type"))
		}
		if tt.status == 200 && !strings.Contains(w.Header().Get("Content-Security-Policy"), "script-src 'self'") {
			t.Errorf("GET %s: no content security policy", tt.path)
		}
	}
}

// The bot's side: Post, Edit and Finish, and what they refuse.
func TestPostEditFinish(t *testing.T) {
	t.Parallel()
	c, _ := started(t, Config{}, nil)
	ctx := context.Background()
	user := say(t, c.Handler(), "alice", "", "hello")
	ref, err := c.StartStream(ctx, dest("alerts", ""), connectors.Message{Text: "disk 91% on web-1"})
	if err != nil || ref.Thread != ref.ID || ref.Channel != "alerts" {
		t.Fatalf("a new thread in a new channel: %+v, %v", ref, err)
	}
	if chans, _ := c.hub.channelList(); len(chans) != 2 || chans[1].Name != "alerts" {
		t.Errorf("channels after posting to alerts: %+v", chans)
	}
	if err := c.Edit(ctx, ref, connectors.Message{Text: "disk 95% on web-1"}); err != nil {
		t.Fatal(err)
	}
	if err := finish(ctx, c, ref); err != nil {
		t.Fatal(err)
	}
	if err := c.Edit(ctx, ref, connectors.Message{Text: "resolved"}); err != nil {
		t.Fatal(err)
	}
	if m, _ := c.hub.message(context.Background(), ref.ID); m.Text != "resolved" || !m.Finished {
		t.Errorf("after edit, finish, edit: %+v, want the last text, still finished", m)
	}
	fails := []struct {
		name string
		err  error
	}{
		{"post to an unknown thread", func() error { _, err := c.StartStream(ctx, dest("ops", "m999"), connectors.Message{}); return err }()},
		{"post to another channel's thread", func() error { _, err := c.StartStream(ctx, dest("ops", ref.Thread), connectors.Message{}); return err }()},
		{"post to a bad channel name", func() error { _, err := c.StartStream(ctx, dest("Ops!", ""), connectors.Message{}); return err }()},
		{"edit an unknown message", c.Edit(ctx, connectors.Ref{ID: "m999"}, connectors.Message{})},
		{"edit a person's message", c.Edit(ctx, connectors.Ref{ID: user.ID}, connectors.Message{})},
		{"finish a person's message", finish(ctx, c, connectors.Ref{ID: user.ID})},
	}
	for _, f := range fails {
		if f.err == nil {
			t.Errorf("%s: no error", f.name)
		}
	}
}

func TestStartOnce(t *testing.T) {
	t.Parallel()
	c, _ := started(t, Config{}, nil)
	if err := c.Start(context.Background(), func(context.Context, connectors.Event) error { return nil }); err == nil {
		t.Error("a second Start was accepted")
	}
	if c.Name() != "web" || c.Limits().MaxText == 0 || c.Limits().EditInterval == 0 {
		t.Errorf("name %q, limits %+v", c.Name(), c.Limits())
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	t.Parallel()
	if _, err := New(context.Background(), Config{OnBusy: "drop"}, nil); err == nil {
		t.Error("on_busy: drop was accepted")
	}
	if _, err := New(context.Background(), Config{}, brokenArchive{NewMemoryArchive()}); err == nil {
		t.Error("an archive that cannot be read was accepted")
	}
}

// brokenArchive cannot read its threads.
type brokenArchive struct{ *MemoryArchive }

func (brokenArchive) Threads(context.Context, string) ([]StoredThread, error) {
	return nil, errors.New("disk I/O error")
}

// A message or click for the bot that the bot could not record (its
// Handler refused it) is answered 503 in words, never 201/202: the client
// knows it was not taken and sends it again. Before, the API answered
// 201/202 whatever the Handler did.
func TestEventNotRecordedIsAnswered503(t *testing.T) {
	t.Parallel()
	c := unstarted(t, Config{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		c.Start(ctx, func(context.Context, connectors.Event) error {
			return fmt.Errorf("%w: the database /var/lib/opsbot/opsbot.db cannot be written: the disk is full", connectors.ErrNotRecorded)
		})
		close(done)
	}()
	t.Cleanup(func() { cancel(); <-done })
	<-c.Running()
	h := c.Handler()
	w := call(t, h, "POST", "/api/messages", `{"channel":"ops","user":"alice","text":"@opsbot is web-3 up?"}`)
	if msg := decodeBody[apiError](t, w).Error; w.Code != http.StatusServiceUnavailable || !strings.Contains(msg, "did not take it") ||
		!strings.Contains(msg, "the disk is full") || !strings.HasSuffix(msg, "send it again") {
		t.Errorf("a post the bot did not record: %d %s; want 503 saying it was not taken, why, and what to do", w.Code, w.Body)
	}
	ref, err := c.Post(context.Background(), connectors.Dest{Channel: "ops"}, connectors.Message{Text: "ok?",
		Buttons: []connectors.Button{{ActionID: "deny", Value: "a1", Label: "Deny"}}})
	if err != nil {
		t.Fatal(err)
	}
	w = call(t, h, "POST", "/api/actions", fmt.Sprintf(`{"message_id":%q,"action_id":"deny","value":"a1","user":"bob"}`, ref.ID))
	if msg := decodeBody[apiError](t, w).Error; w.Code != http.StatusServiceUnavailable || !strings.Contains(msg, "did not take your click") ||
		!strings.Contains(msg, "the disk is full") {
		t.Errorf("a click the bot did not record: %d %s; want 503 in words", w.Code, w.Body)
	}
}
