package connectortest

import (
	"time"

	"github.com/opsbot/opsbot/connectors"
)

// taskCards: a TaskUpdater's cards go pending → in_progress → complete
// (or error), each update replacing the card of its id, and the platform
// shows each card's last status.
func (h Harness) taskCards(t T, tu connectors.TaskUpdater, note func(error) error) {
	ctx := t.Context()
	d := h.Dest
	d.Recipient = connectors.User{ID: "U04ALICE"}
	st, ok := tu.(connectors.Streamer)
	if !ok {
		t.Fatalf("%s updates tasks but does not stream: a TaskUpdater is a Streamer", h.Conn.Name())
	}
	ref, err := st.StartStream(ctx, d, connectors.Message{Text: "Checking nginx"})
	if note(err) != nil {
		t.Fatalf("start stream: %v", err)
	}
	steps := []connectors.Task{
		{ID: "cmd-1", Title: "systemctl is-active nginx", Status: connectors.TaskPending, Details: "on web-1"},
		{ID: "cmd-1", Title: "systemctl is-active nginx", Status: connectors.TaskInProgress, Details: "on web-1"},
		{ID: "cmd-2", Title: "df -h /", Status: connectors.TaskPending, Details: "on web-1"},
		{ID: "cmd-1", Title: "systemctl is-active nginx", Status: connectors.TaskComplete, Output: "exit 0 in 0.2 s"},
		{ID: "cmd-2", Title: "df -h /", Status: connectors.TaskInProgress, Details: "on web-1"},
		{ID: "cmd-2", Title: "df -h /", Status: connectors.TaskError, Output: "exit 1 in 0.1 s"},
	}
	for _, s := range steps {
		if err := note(tu.UpdateTask(ctx, ref, s)); err != nil {
			t.Fatalf("update task %s to %s: %v", s.ID, s.Status, err)
		}
	}
	got := h.Tasks(ref)
	want := map[string]connectors.TaskStatus{"cmd-1": connectors.TaskComplete, "cmd-2": connectors.TaskError}
	if len(got) != len(want) {
		t.Errorf("the stream shows %d task cards %+v; want %d, one per id", len(got), got, len(want))
	}
	for _, c := range got {
		if want[c.ID] != c.Status {
			t.Errorf("task card %s shows %q; want %q", c.ID, c.Status, want[c.ID])
		}
	}
	if err := note(st.StopStream(ctx, ref, connectors.Message{Text: "Checking nginx: up."})); err != nil {
		t.Fatalf("stop stream: %v", err)
	}
}

// messageCards: a TaskMessenger shows Message.Tasks in the message it
// posts, and an edit replaces them with the edit's: the platform shows
// each card's status as the last post or edit gave it, beside the text.
func (h Harness) messageCards(t T, note func(error) error) {
	ctx := t.Context()
	running := []connectors.Task{
		{ID: "cmd-1", Title: "systemctl is-active nginx", Status: connectors.TaskComplete, Output: "exit 0 in 0.2 s"},
		{ID: "cmd-2", Title: "df -h /", Status: connectors.TaskInProgress, Details: "on web-1"},
	}
	ref, err := h.Conn.Post(ctx, h.Dest, connectors.Message{Text: "Checking nginx", Tasks: running})
	if note(err) != nil {
		t.Fatalf("post with cards: %v", err)
	}
	h.cardsShown(t, ref, map[string]connectors.TaskStatus{"cmd-1": connectors.TaskComplete, "cmd-2": connectors.TaskInProgress})
	ended := []connectors.Task{running[0], {ID: "cmd-2", Title: "df -h /", Status: connectors.TaskError, Output: "exit 1 in 0.1 s"}}
	if err := note(h.Conn.Edit(ctx, ref, connectors.Message{Text: "Checking nginx: up; / is full.", Tasks: ended})); err != nil {
		t.Fatalf("edit with cards: %v", err)
	}
	h.cardsShown(t, ref, map[string]connectors.TaskStatus{"cmd-1": connectors.TaskComplete, "cmd-2": connectors.TaskError})
	h.shows(t, ref, "Checking nginx: up; / is full.")
}

// cardsShown checks that message ref shows exactly the cards of want,
// each with its status.
func (h Harness) cardsShown(t T, ref connectors.Ref, want map[string]connectors.TaskStatus) {
	got := h.Tasks(ref)
	if len(got) != len(want) {
		t.Errorf("the message shows %d task cards %+v; want %d", len(got), got, len(want))
	}
	for _, c := range got {
		if want[c.ID] != c.Status {
			t.Errorf("task card %s shows %q; want %q", c.ID, c.Status, want[c.ID])
		}
	}
}

// feedback: an answer posted with Message.Feedback offers feedback, and a
// click of it comes back as an EventAction of ActionFeedback whose value
// names the verdict and the turn.
func (h Harness) feedback(t T, note func(error) error) {
	const turn = "turn-42"
	ref, err := h.Conn.Post(t.Context(), h.Dest, connectors.Message{Text: "nginx is up on web-1.", Feedback: turn})
	if note(err) != nil {
		t.Fatalf("post: %v", err)
	}
	h.ClickFeedback(ref, "bad:"+turn, connectors.User{ID: "U04BOB", Name: "bob"})
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case ev := <-h.Events:
			if ev.Kind != connectors.EventAction {
				continue
			}
			if ev.ActionID != connectors.ActionFeedback || ev.Value != "bad:"+turn || ev.Ref.ID != ref.ID || ev.User.ID != "U04BOB" {
				t.Errorf("the feedback click came back as %+v; want action %s, value bad:%s", ev, connectors.ActionFeedback, turn)
			}
			return
		case <-timer.C:
			t.Fatalf("the feedback click never reached the Handler")
		}
	}
}
