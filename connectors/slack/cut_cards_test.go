package slack_test

import (
	"testing"

	"github.com/opsbot/opsbot/connectors"
	opslack "github.com/opsbot/opsbot/connectors/slack"
	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

// A posted answer (by edits) shows its command's card and Stop; a kill
// cuts it after an edit whose record never landed (the record is
// behind). The restart leaves what it shows, the note below, but ends its
// card and takes Stop away: nothing runs any more.
func TestCutPostedAnswerKeepsNoStop(t *testing.T) {
	fake := slackfake.NewLocal()
	conn := func() *opslack.Connector { return localConnector(t, fake, nil) }
	root := fake.Mention("C0OPS", "U0ALICE", "", "deploy web")
	d := connectors.Dest{Platform: opslack.Platform, Workspace: slackfake.Team, Channel: "C0OPS", Thread: root.TS, Recipient: connectors.User{ID: "U0ALICE"}}
	ref, err := conn().Post(t.Context(), d, connectors.Message{Text: "Deploying web-1 now.",
		Buttons: []connectors.Button{{ActionID: "opsbot_stop", Value: "57", Label: "Stop"}},
		Tasks:   []connectors.Task{{ID: "call-1", Title: "`deploy --wait` on web-1", Status: connectors.TaskInProgress}}})
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := fake.Message("C0OPS", ref.ID); len(m.Buttons()) == 0 {
		t.Fatalf("the post shows no button before the cut: %+v", m.Blocks)
	}
	if err := conn().EndCutAnswer(t.Context(), ref, "Deploying", cutNote, cutOpen, "57"); err != nil {
		t.Fatalf("EndCutAnswer: %v", err)
	}
	m, _ := fake.Message("C0OPS", ref.ID)
	if len(m.Tasks) != 1 || m.Tasks[0].Status != "error" {
		t.Errorf("card after the restart: %+v", m.Tasks)
	}
	if b := m.Buttons(); len(b) > 0 {
		t.Errorf("after the restart the cut answer still shows buttons %v (Stop on an answer that no longer runs):\n%s", b, fake.ThreadText("C0OPS", ref.Thread))
	}
}

// An answer whose command came first is posted with its card and no
// words (its record holds ""), and a kill cuts it there. Slack's text of
// that post is only its blocks' fallback (the card's title), not words
// the record lacks: the restart ends the answer in its own message, the
// note there, not in a second message below.
func TestCutWordlessPostTakesTheNote(t *testing.T) {
	fake, c, ref := postedCut(t, "")
	if err := c.EndCutAnswer(t.Context(), ref, "", cutNote, cutOpen, "57"); err != nil {
		t.Fatalf("EndCutAnswer: %v", err)
	}
	var bot int
	for _, m := range fake.Thread("C0OPS", ref.Thread) {
		if m.TS != ref.Thread {
			bot++
		}
	}
	if bot != 1 {
		t.Errorf("after the restart the thread has %d bot messages; want the cut post to carry the note itself:\n%s", bot, fake.ThreadText("C0OPS", ref.Thread))
	}
}
