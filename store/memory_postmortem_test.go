package store

import (
	"context"
	"encoding/json"
	"maps"
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

// A thread's messages map to where people find them: in the web chat a
// question to the person's message before it, an answer to the bot's
// post after that question (not a card posted since); on Slack an answer to the ts of the post it streamed into, a
// question to nothing (Slack's questions are not kept here).
func TestMemoryMessageRefs(t *testing.T) {
	t.Parallel()
	s, clock := openTest(t)
	ctx := context.Background()
	web, _, _ := s.Sessions().SessionFor(ctx, ThreadKey{Platform: "web", Channel: "ops", Thread: "m1"})
	slack, _, _ := s.Sessions().SessionFor(ctx, ThreadKey{Platform: "slack", Channel: "C1", Thread: "1700.1"})
	// A question (m1), its answer's post (m2), a card (m3) before the
	// answer's last text; another question (m4) and its answer (m5). A
	// post and the message after it share a millisecond, as a fast turn
	// writes them.
	for i, step := range []struct {
		post archive.Message
		role string // the session message written after the post
	}{{archive.Message{ID: "m1", User: "alice"}, "user"}, {archive.Message{ID: "m2", Bot: true}, "assistant"},
		{archive.Message{ID: "m3", Bot: true}, "assistant"}, {archive.Message{ID: "m4", User: "bob"}, "user"}, {archive.Message{ID: "m5", Bot: true}, "assistant"}} {
		m := step.post
		m.Channel, m.Thread, m.Message, m.Finished, m.Seq, m.Created, m.Updated = "ops", "m1", json.RawMessage(`{"text":"x"}`), true, uint64(i+1), clock.Now(), clock.Now()
		s.Web().Save(ctx, m)
		s.Sessions().AppendMessages(ctx, web.ID, textMsg(step.role, "text"))
		clock.Add(time.Millisecond)
	}
	s.Sessions().AppendMessages(ctx, slack.ID, textMsg("user", "why"))
	s.Sessions().RecordStreaming(ctx, PostedMessage{Platform: "slack", Channel: "C1", Thread: "1700.1", MessageID: "1700.2", SessionID: slack.ID})
	clock.Add(time.Second)
	s.Sessions().AppendMessages(ctx, slack.ID, textMsg("assistant", "because"))
	got, err := s.Memory().MessageRefs(ctx, web.ID)
	want := map[int64]MessageRef{1: {"alice", "web", "m1"}, 2: {"", "web", "m2"}, 3: {"", "web", "m2"}, 4: {"bob", "web", "m4"}, 5: {"", "web", "m5"}}
	if err != nil || !maps.Equal(got, want) {
		t.Errorf("web refs = %v, %v; want %v", got, err, want)
	}
	got, err = s.Memory().MessageRefs(ctx, slack.ID)
	want = map[int64]MessageRef{1: {"", "slack", ""}, 2: {"", "slack", "1700.2"}}
	if err != nil || !maps.Equal(got, want) {
		t.Errorf("slack refs = %v, %v; want %v", got, err, want)
	}
}
