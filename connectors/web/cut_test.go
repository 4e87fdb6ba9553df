package web

import (
	"context"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/connectors"
)

// A message a crash cut is ended by the next process with the note after
// what the chat shows (issue 28 item 3): when the bot's record is behind
// (the full disk kept 763 of 3,935 characters), the shown text stays and
// the note follows it; when the record has it all, the note follows the
// record. Either way the message is complete, live stream or not.
func TestEndCutNeverShortensWhatIsShown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	archive := NewMemoryArchive()
	before, _ := started(t, Config{}, archive)
	shownText := strings.Repeat("the disk on db-1 is at 97 percent. ", 100)
	behind, err := before.StartStream(ctx, dest("ops", ""), connectors.Message{Text: shownText})
	if err != nil {
		t.Fatal(err)
	}
	whole, err := before.StartStream(ctx, dest("ops", ""), connectors.Message{Text: "short"})
	if err != nil {
		t.Fatal(err)
	}
	if err := before.Edit(ctx, whole, connectors.Message{Text: "short"}); err != nil {
		t.Fatal(err)
	}
	const note = "\n\n_(interrupted)_"

	after, _ := started(t, Config{}, archive) // the next process, on the same archive
	if err := after.EndCut(ctx, behind, shownText[:763], note); err != nil {
		t.Fatal(err)
	}
	if m, _ := after.hub.message(ctx, behind.ID); m.Text != shownText+note || !m.Finished {
		t.Errorf("a message whose record is behind ends %d characters long (finished %v); want the %d shown and the note",
			len(m.Text), m.Finished, len(shownText))
	}
	if err := after.StopStream(ctx, whole, connectors.Message{Text: "short"}); err != nil {
		t.Fatal(err)
	}
	if err := after.EndCut(ctx, whole, "short, and more on record", note); err != nil {
		t.Fatal(err)
	}
	if m, _ := after.hub.message(ctx, whole.ID); m.Text != "short, and more on record"+note || !m.Finished {
		t.Errorf("a complete message whose record is ahead ends %q (finished %v); want the record and the note", m.Text, m.Finished)
	}
}
