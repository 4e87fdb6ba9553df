package slack_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
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
