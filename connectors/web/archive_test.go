package web

import (
	"context"
	"slices"
	"testing"

	"github.com/opsbot/opsbot/connectors"
)

// Messages survive a restart: threads, content, finished flags and seq
// numbers come back, new ids and seqs continue above the old, and a
// thread the bot was part of still sends every message to it.
func TestRestartKeepsTheChat(t *testing.T) {
	t.Parallel()
	archive := NewMemoryArchive()
	ctx := context.Background()
	before, bot := started(t, Config{}, archive)
	root := say(t, before.Handler(), "alice", "", "@opsbot check disks")
	bot.next(t)
	done, _ := before.StartStream(ctx, dest("ops", root.Thread), connectors.Message{Text: "all fine", Fields: []connectors.Field{{Title: "web-1", Value: "40%"}},
		Context: "took 2s", Buttons: []connectors.Button{{ActionID: "again", Value: "1", Label: "Again", Style: connectors.StylePrimary}}})
	finish(ctx, before, done)
	streaming, _ := before.StartStream(ctx, dest("ops", root.Thread), connectors.Message{Text: "and half of an answ"})
	wantMsgs, wantSeq, _, _ := before.hub.threadMessages(ctx, root.Thread, page{limit: 50})

	after, bot2 := started(t, Config{}, archive)
	msgs, seq, _, err := after.hub.threadMessages(ctx, root.Thread, page{limit: 50})
	if err != nil || seq != wantSeq || len(msgs) != 3 {
		t.Fatalf("after a restart: %d messages at seq %d (%v), want 3 at %d", len(msgs), seq, err, wantSeq)
	}
	for i := range msgs {
		if jsonString(msgs[i]) != jsonString(wantMsgs[i]) {
			t.Errorf("message %d came back as %s, want %s", i, jsonString(msgs[i]), jsonString(wantMsgs[i]))
		}
	}
	if msgs[2].ID != streaming.ID || msgs[2].Finished {
		t.Errorf("the interrupted answer came back as %+v: the bot finalizes it, not the connector", msgs[2])
	}
	res := say(t, after.Handler(), "alice", root.Thread, "and memory?")
	if !res.ForBot || res.Seq != wantSeq+1 || idNumber(res.ID) <= idNumber(streaming.ID) {
		t.Errorf("a reply after the restart: %+v", res)
	}
	if ev := bot2.next(t); ev.Text != "and memory?" {
		t.Errorf("the bot got %q", ev.Text)
	}
	stored, _ := archive.ThreadMessages(ctx, root.Thread, 0, 10)
	slices.Reverse(stored)
	if len(stored) != 4 || !stored[1].Finished || stored[1].Seq == 0 || string(stored[1].Message) !=
		`{"text":"all fine","fields":[{"title":"web-1","value":"40%"}],"context":"took 2s","buttons":[{"action_id":"again","value":"1","label":"Again","style":"primary"}]}` {
		t.Errorf("the archive holds %+v", stored)
	}
}
