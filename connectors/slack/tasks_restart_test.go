package slack_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/opsbot/opsbot/bot/render"
	"github.com/opsbot/opsbot/connectors"
	opslack "github.com/opsbot/opsbot/connectors/slack"
	"github.com/opsbot/opsbot/connectors/slack/slackfake"
	"github.com/opsbot/opsbot/store"
)

// memRecorder keeps the renderer's records of messages being written,
// as the store does.
type memRecorder struct {
	mu   sync.Mutex
	next int64
	open map[int64]store.PostedMessage
}

func (m *memRecorder) RecordStreaming(_ context.Context, p store.PostedMessage) (store.PostedMessage, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.next++
	p.ID = m.next
	m.open[p.ID] = p
	return p, nil
}

func (m *memRecorder) PostedStreaming(_ context.Context, id int64, messageID, text string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.open[id]
	p.MessageID, p.Text = messageID, text
	m.open[id] = p
	return nil
}

func (m *memRecorder) UpdateStreamingText(_ context.Context, id int64, text string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.open[id]; ok {
		p.Text = text
		m.open[id] = p
	}
	return nil
}

func (m *memRecorder) RecordCards(_ context.Context, id int64, cards []store.OpenCard) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.open[id]; ok {
		p.Cards = cards
		m.open[id] = p
	}
	return nil
}

func (m *memRecorder) FinishStreaming(_ context.Context, id int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.open, id)
	return nil
}

// A process killed while an answer shows Stop below its stream: the
// next one's recovery ends every message on record as cut (EndCut, as
// bot's recovery does), the Stop message among them, so no Stop is left
// that nothing answers.
func TestRestartLeavesNoDeadStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake, c := localConn(t, opslack.Config{})
		root := fake.Mention("C0OPS", "U0ALICE", "", "wait a while")
		dest := connectors.Dest{Platform: opslack.Platform, Workspace: slackfake.Team, Channel: "C0OPS", Thread: root.TS,
			Recipient: connectors.User{ID: "U0ALICE"}}
		rec := &memRecorder{open: map[int64]store.PostedMessage{}}
		ctx, kill := context.WithCancel(context.Background())
		r := render.NewRenderer(ctx, c, render.NewEditBudget(c.Limits().EditsPerMinute), rec, slog.New(slog.NewTextHandler(io.Discard, nil)), dest, stopButton)
		r.Write("Waiting on the deploy. ")
		r.Task(connectors.Task{ID: "call-1", Title: "`deploy --wait` on web-1", Status: connectors.TaskInProgress})
		time.Sleep(7 * time.Second)
		synctest.Wait()
		if _, ok := stopIn(fake, root.TS); !ok {
			t.Fatalf("no Stop 7 s in:\n%s", fake.ThreadText("C0OPS", root.TS))
		}
		kill()
		synctest.Wait()
		rec.mu.Lock()
		left := rec.open
		rec.mu.Unlock()
		if len(left) != 2 {
			t.Errorf("%d messages on record as being written; want the stream and the Stop message", len(left))
		}
		fresh, err := opslack.New(opslack.Config{BotToken: slackfake.BotToken, AppToken: slackfake.AppToken, APIURL: fake.URL}, opslack.Options{HTTPClient: &http.Client{Transport: fake.Transport()}})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range left {
			ref := connectors.Ref{Platform: m.Platform, Channel: m.Channel, Thread: m.Thread, ID: m.MessageID}
			if err := fresh.EndCut(context.Background(), ref, m.Text, "\n\n_(interrupted: opsbot restarted before this answer finished)_"); err != nil {
				t.Errorf("end %s: %v", m.MessageID, err)
			}
		}
		if m, ok := stopIn(fake, root.TS); ok {
			t.Errorf("message %s still shows Stop after the restart:\n%s", m.TS, fake.ThreadText("C0OPS", root.TS))
		}
	})
}

// stopIn is the bot message of thread that shows buttons, if any.
func stopIn(fake *slackfake.Server, thread string) (slackfake.Message, bool) {
	for _, m := range fake.Thread("C0OPS", thread)[1:] {
		if len(m.Buttons()) > 0 {
			return m, true
		}
	}
	return slackfake.Message{}, false
}

// A process killed while its answer's stream shows a card in progress,
// another complete: the stream's record holds the open card, and the next
// one's EndCutCards stops the stream with the note and closes that card
// as an error, in the same stop; the complete one keeps its status. When
// Slack had ended the stream already, its cards can no longer change: the
// note still gets there.
func TestRestartClosesOpenCardsInTheStop(t *testing.T) {
	for _, ended := range []bool{false, true} {
		t.Run(map[bool]string{false: "streaming", true: "ended by Slack"}[ended], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fake, c := localConn(t, opslack.Config{})
				root := fake.Mention("C0OPS", "U0ALICE", "", "check web")
				dest := connectors.Dest{Platform: opslack.Platform, Workspace: slackfake.Team, Channel: "C0OPS", Thread: root.TS,
					Recipient: connectors.User{ID: "U0ALICE"}}
				rec := &memRecorder{open: map[int64]store.PostedMessage{}}
				ctx, kill := context.WithCancel(context.Background())
				r := render.NewRenderer(ctx, c, render.NewEditBudget(c.Limits().EditsPerMinute), rec, slog.New(slog.NewTextHandler(io.Discard, nil)), dest)
				r.Write("Checking web. ")
				r.Task(connectors.Task{ID: "call-1", Title: "`uptime` on web-1", Status: connectors.TaskInProgress})
				r.Task(connectors.Task{ID: "call-2", Title: "`deploy --wait` on web-1", Status: connectors.TaskInProgress})
				time.Sleep(2 * time.Second)
				synctest.Wait()
				r.Task(connectors.Task{ID: "call-1", Title: "`uptime` on web-1", Status: connectors.TaskComplete})
				time.Sleep(2 * time.Second)
				synctest.Wait()
				kill()
				synctest.Wait()
				if ended {
					fake.EndStreams()
				}
				rec.mu.Lock()
				var left []store.PostedMessage
				for _, m := range rec.open {
					left = append(left, m)
				}
				rec.mu.Unlock()
				if len(left) != 1 || len(left[0].Cards) != 1 || left[0].Cards[0].ID != "call-2" {
					t.Fatalf("on record: %+v; want the stream with call-2's card open", left)
				}
				fresh := localConnector(t, fake, nil)
				m := left[0]
				ref := connectors.Ref{Platform: m.Platform, Channel: m.Channel, Thread: m.Thread, ID: m.MessageID}
				open := []connectors.Task{{ID: "call-2", Title: m.Cards[0].Title, Status: connectors.TaskError, Output: "opsbot restarted while this ran"}}
				if err := fresh.EndCutCards(context.Background(), ref, m.Text, "\n\n_(interrupted)_", open); err != nil {
					t.Fatalf("end the cut stream: %v", err)
				}
				if !strings.Contains(fake.ThreadText("C0OPS", root.TS), "(interrupted)") {
					t.Errorf("no note in the thread:\n%s", fake.ThreadText("C0OPS", root.TS))
				}
				if ended {
					return
				}
				shown, _ := fake.Message("C0OPS", m.MessageID)
				want := map[string]string{"call-1": "complete", "call-2": "error"}
				for _, tk := range shown.Tasks {
					if tk.Status != want[tk.ID] {
						t.Errorf("card %s ends %q (%s); want %q", tk.ID, tk.Status, tk.Output, want[tk.ID])
					}
				}
				if len(fake.StoppedOpen()) > 0 || shown.Streaming {
					t.Errorf("the stream (streaming %v) has cards open: %+v", shown.Streaming, shown.OpenTasks())
				}
			})
		})
	}
}
