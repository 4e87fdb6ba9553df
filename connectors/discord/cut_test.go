package discord

import (
	"strings"
	"testing"

	"github.com/opsbot/opsbot/connectors"
)

// A message a crash cut is ended without showing less than it shows
// (issue 28 item 3): read back from Discord, a message that shows more
// than the bot's record (the full disk kept 763 of 3,935 characters)
// keeps its text and gets the note below it; one the record has whole
// becomes the record and the note. In both renderings.
func TestEndCutNeverShortensWhatIsShown(t *testing.T) {
	t.Parallel()
	off := false
	for _, cfg := range []Config{{}, {ComponentsV2: &off}} {
		f := newFake(t)
		ch := f.AddChannel(guild, "ops")
		thread := f.AddThread(ch, "disk")
		c, _ := started(t, f, cfg)
		d := connectors.Dest{Platform: Platform, Channel: ch, Thread: thread}
		shownText := strings.Repeat("the disk on db-1 is at 97 percent. ", 50)[:1700]
		const note = "\n\n_(interrupted)_"

		behind, err := c.Post(t.Context(), d, connectors.Message{Text: shownText})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.EndCut(t.Context(), behind, shownText[:763], note); err != nil {
			t.Fatalf("V2 %v: %v", cfg.V2(), err)
		}
		if m, _ := f.Message(behind.ID); !strings.Contains(m.Content, shownText) || strings.Contains(m.Content, "interrupted") {
			t.Errorf("V2 %v: a message whose record is behind now shows %d characters: %.80q…", cfg.V2(), len(m.Content), m.Content)
		}
		msgs := f.Messages(thread)
		if last := msgs[len(msgs)-1]; !strings.HasPrefix(last.Content, "_(interrupted)_") {
			t.Errorf("V2 %v: no note below the message; the thread ends with %q", cfg.V2(), last.Content)
		}

		whole, err := c.Post(t.Context(), d, connectors.Message{Text: "short"})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.EndCut(t.Context(), whole, "short, and more on record", note); err != nil {
			t.Fatal(err)
		}
		if m, _ := f.Message(whole.ID); !strings.Contains(m.Content, "short, and more on record") || !strings.Contains(m.Content, "(interrupted)") {
			t.Errorf("V2 %v: a message the record has whole ends %q; want the record and the note", cfg.V2(), m.Content)
		}
	}
}
