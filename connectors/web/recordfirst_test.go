package web

import (
	"context"
	"testing"
	"time"

	"github.com/opsbot/opsbot/connectors"
)

// gatedArchive holds every Save until the test lets it through, saying
// when one is waiting.
type gatedArchive struct {
	*MemoryArchive
	saving chan string
	let    chan struct{}
}

func (a *gatedArchive) Save(ctx context.Context, m StoredMessage) error {
	a.saving <- m.ID
	<-a.let
	return a.MemoryArchive.Save(ctx, m)
}

// Record, then act: a change reaches the event streams only once it is in
// the Archive. Broadcast first, a crash between the two left browsers
// showing a message (or a bot answer being written) that the restarted
// chat did not have, and recovery could not find (issue 12, item 2).
func TestChangeIsSavedBeforeItIsBroadcast(t *testing.T) {
	t.Parallel()
	arch := &gatedArchive{MemoryArchive: NewMemoryArchive(), saving: make(chan string), let: make(chan struct{})}
	c, _ := started(t, Config{Channels: []string{"ops"}}, arch)
	sub := &subscriber{}
	c.hub.subscribe(sub)

	posted := make(chan error, 1)
	go func() {
		_, _, err := c.hub.add(context.Background(), post{channel: "ops", user: "alice", body: body{Text: "disk full on web-3"}})
		posted <- err
	}()
	var id string
	select {
	case id = <-arch.saving:
	case <-time.After(wait):
		t.Fatal("the post never reached the Archive")
	}
	select {
	case f := <-sub.frames:
		t.Fatalf("message %s was broadcast before it was saved: %s", id, f)
	default:
	}
	close(arch.let)
	if err := <-posted; err != nil {
		t.Fatal(err)
	}
	select {
	case <-sub.frames:
	case <-time.After(wait):
		t.Fatal("the saved message was never broadcast")
	}
}

// The chat names the bot's messages still being written in a thread, so
// that after a crash between a post and the bot's record of it, recovery
// can finish the message (connectors.UnfinishedLister).
func TestUnfinishedListsWhatIsBeingWritten(t *testing.T) {
	t.Parallel()
	c := unstarted(t, Config{Channels: []string{"ops"}}, nil)
	ctx := context.Background()
	done, _ := c.StartStream(ctx, dest("ops", ""), connectors.Message{Text: "first"})
	c.StopStream(ctx, done, connectors.Message{Text: "first, complete"})
	writing, _ := c.StartStream(ctx, dest("ops", done.Thread), connectors.Message{Text: "The disk is at"})
	left, err := c.Unfinished(ctx, dest("ops", done.Thread))
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0].Ref.ID != writing.ID || left[0].Message.Text != "The disk is at" {
		t.Errorf("Unfinished = %+v, want only %s", left, writing.ID)
	}
}
