package web

import (
	"context"
	"errors"
	"testing"

	"github.com/opsbot/opsbot/connectors"
)

// The web chat is a connectors.Streamer: a stream shows as being written
// until it stops, grows by appends, may be edited while live (its tool
// activity line changes), and refuses changes once stopped; a post is
// complete at once. Mentions show as @name.
func TestStreamLifecycle(t *testing.T) {
	t.Parallel()
	c, _ := started(t, Config{}, nil)
	ctx := context.Background()
	ref, err := c.StartStream(ctx, dest("ops", ""), connectors.Message{Text: "Checking", Context: "running df"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AppendStream(ctx, ref, " the disks"); err != nil {
		t.Fatal(err)
	}
	if m, _ := c.hub.message(ctx, ref.ID); m.Text != "Checking the disks" || m.Finished {
		t.Errorf("live stream: %q finished=%v", m.Text, m.Finished)
	}
	if err := c.Edit(ctx, ref, connectors.Message{Text: "Checking the disks", Context: "✓ df"}); err != nil {
		t.Fatal(err)
	}
	if m, _ := c.hub.message(ctx, ref.ID); m.Context != "✓ df" || m.Finished {
		t.Errorf("edited stream: context %q finished=%v", m.Context, m.Finished)
	}
	final := connectors.Message{Text: "Checking the disks: fine, says " + connectors.Mention("alice"), Context: "✓ df"}
	if err := c.StopStream(ctx, ref, final); err != nil {
		t.Fatal(err)
	}
	if m, _ := c.hub.message(ctx, ref.ID); m.Text != "Checking the disks: fine, says @alice" || !m.Finished {
		t.Errorf("stopped stream: %q finished=%v", m.Text, m.Finished)
	}
	if err := c.AppendStream(ctx, ref, "more"); !errors.Is(err, connectors.ErrStreamEnded) {
		t.Errorf("append after stop: %v, want ErrStreamEnded", err)
	}
	if err := c.StopStream(ctx, ref, final); !errors.Is(err, connectors.ErrStreamEnded) {
		t.Errorf("second stop: %v, want ErrStreamEnded", err)
	}
	post, err := c.Post(ctx, dest("ops", ref.Thread), connectors.Message{Text: "done"})
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := c.hub.message(ctx, post.ID); !m.Finished {
		t.Error("a post is not complete at once")
	}
}
