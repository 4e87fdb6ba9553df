package store

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/connectors/web/archive"
)

// The postmortem last posted in a thread is kept, replaced by the next,
// and goes with the web thread past web.retention.
func TestMemoryKeepsTheLastPostmortem(t *testing.T) {
	t.Parallel()
	s, clock := openTest(t)
	ctx := context.Background()
	sess, _, _ := s.Sessions().SessionFor(ctx, ThreadKey{Platform: "web", Channel: "ops", Thread: "m1"})
	s.Web().Save(ctx, archive.Message{ID: "m1", Channel: "ops", Thread: "m1", User: "alice", Message: json.RawMessage(`{"text":"nginx down"}`),
		Finished: true, Seq: 1, Created: clock.Now(), Updated: clock.Now()})
	if _, _, found, err := s.Memory().LastPostmortem(ctx, sess.ID); found || err != nil {
		t.Fatalf("before any: found %v, %v", found, err)
	}
	for _, md := range []string{"# Postmortem: first\n", "# Postmortem: second\n"} {
		if err := s.Memory().SavePostmortem(ctx, sess.ID, md); err != nil {
			t.Fatal(err)
		}
	}
	md, at, found, err := s.Memory().LastPostmortem(ctx, sess.ID)
	if md != "# Postmortem: second\n" || !at.Equal(clock.Now().Truncate(time.Millisecond)) || !found || err != nil {
		t.Errorf("last = %q at %v, %v, %v; want the second", md, at, found, err)
	}
	if err := s.Web().DeleteThreads(ctx, []string{"m1"}); err != nil {
		t.Fatal(err)
	}
	if _, _, found, _ := s.Memory().LastPostmortem(ctx, sess.ID); found {
		t.Errorf("a postmortem outlived its web thread's retention")
	}
}

// A web thread's message is the web chat message its text is in, never
// the one at its position: a question is the person's post holding it
// ("@opsbot " and the question), an answer the bot's post holding it
// even when a card came first (m2) or it was posted in parts (m6, m7),
// and opsbot's own note that began a turn is a note, not the question
// before it. Elsewhere an answer is the post its turn streamed into.
func TestMemoryMessageRefs(t *testing.T) {
	t.Parallel()
	s, clock := openTest(t)
	ctx := context.Background()
	web, _, _ := s.Sessions().SessionFor(ctx, ThreadKey{Platform: "web", Channel: "ops", Thread: "m1"})
	slack, _, _ := s.Sessions().SessionFor(ctx, ThreadKey{Platform: "slack", Channel: "C1", Thread: "1700.1"})
	long := strings.Repeat("nginx had crashed on a bad upstream block. ", 3)
	for i, p := range []struct {
		post archive.Message
		text string
	}{{archive.Message{ID: "m1", User: "alice"}, "@opsbot why 502 on web-1?"}, {archive.Message{ID: "m2", Bot: true}, "Approval needed: systemctl status nginx"},
		{archive.Message{ID: "m3", Bot: true}, "nginx had crashed."}, {archive.Message{ID: "m4", User: "bob"}, "@opsbot is it fixed?"},
		{archive.Message{ID: "m5", Bot: true}, "Yes."}, {archive.Message{ID: "m6", Bot: true}, long[:43]}, {archive.Message{ID: "m7", Bot: true}, long[43:]}} {
		m := p.post
		body, _ := json.Marshal(map[string]string{"text": p.text})
		m.Channel, m.Thread, m.Message, m.Finished, m.Seq, m.Created, m.Updated = "ops", "m1", body, true, uint64(i+1), clock.Now(), clock.Now()
		s.Web().Save(ctx, m)
	}
	for _, msg := range []Message{textMsg("user", "why 502 on web-1?"), textMsg("assistant", "nginx had crashed."), textMsg("user", "is it fixed?"),
		textMsg("assistant", "Yes."), textMsg("user", "[opsbot note, not the person's words] The plan \"x\" ended: every step ran."),
		textMsg("assistant", long), textMsg("assistant", "not posted anywhere")} {
		s.Sessions().AppendMessages(ctx, web.ID, msg)
		clock.Add(time.Millisecond)
	}
	s.Sessions().AppendMessages(ctx, slack.ID, textMsg("user", "why"))
	s.Sessions().RecordStreaming(ctx, PostedMessage{Platform: "slack", Channel: "C1", Thread: "1700.1", MessageID: "1700.2", SessionID: slack.ID})
	clock.Add(time.Second)
	s.Sessions().AppendMessages(ctx, slack.ID, textMsg("assistant", "because"))
	got, err := s.Memory().MessageRefs(ctx, web.ID)
	want := map[int64]MessageRef{1: {"alice", "web", "m1", false}, 2: {"", "web", "m3", false}, 3: {"bob", "web", "m4", false}, 4: {"", "web", "m5", false},
		5: {"", "web", "", true}, 6: {"", "web", "m6", false}, 7: {"", "web", "", false}}
	if err != nil || !maps.Equal(got, want) {
		t.Errorf("web refs = %v, %v; want %v", got, err, want)
	}
	got, err = s.Memory().MessageRefs(ctx, slack.ID)
	want = map[int64]MessageRef{1: {"", "slack", "", false}, 2: {"", "slack", "1700.2", false}}
	if err != nil || !maps.Equal(got, want) {
		t.Errorf("slack refs = %v, %v; want %v", got, err, want)
	}
}
