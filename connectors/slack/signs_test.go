package slack_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/slack"
	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

// knownThreads is an AssistantThreadStore that knows the threads given.
type knownThreads map[string]bool

func (k knownThreads) Started(context.Context, string, string) error { return nil }
func (k knownThreads) FirstQuestion(context.Context, string, string) (bool, error) {
	return false, nil
}
func (k knownThreads) Known(_ context.Context, channel, thread string) (bool, error) {
	return k[channel+"/"+thread], nil
}

// localConnector is a connector over fake's Web API, in a synctest
// bubble, never started: its signs need no Socket Mode.
func localConnector(t *testing.T, fake *slackfake.Server, threads slack.AssistantThreadStore) *slack.Connector {
	t.Helper()
	cfg := slack.Config{BotToken: slackfake.BotToken, AppToken: slackfake.AppToken, APIURL: fake.URL}
	c, err := slack.New(cfg, slack.Options{HTTPClient: &http.Client{Transport: fake.Transport()}, Threads: threads})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// question is ev for a question posted in fake by alice.
func question(fake *slackfake.Server, channel, text string) connectors.Event {
	p := fake.Mention(channel, "U04ALICE", "", text)
	return connectors.Event{Kind: connectors.EventMessage, Platform: slack.Platform, Workspace: slackfake.Team, Channel: channel,
		Thread: p.TS, Text: text, Mention: true, Ref: connectors.Ref{Platform: slack.Platform, Channel: channel, Thread: p.TS, ID: p.TS}}
}

// In an assistant thread the status says what runs: "is thinking…" at
// once, the command when it starts (never within 3 s of the last status
// of the thread), shown again before Slack's two minutes clear it while a
// long command runs, and cleared when the answer ends.
func TestStatusSaysWhatRunsAndStaysFresh(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := slackfake.NewLocal()
		ev := question(fake, "D0ALICE", "is the disk full on web-1?")
		c := localConnector(t, fake, knownThreads{"D0ALICE/" + ev.Thread: true})
		start := time.Now()
		c.Acknowledge(t.Context(), ev)
		synctest.Wait()
		slack.TaskSign(c, ev.Ref, connectors.Task{ID: "t1", Title: "`df -h` on web-1", Status: connectors.TaskInProgress})
		time.Sleep(5 * time.Minute) // a long command
		synctest.Wait()
		c.Done(t.Context(), ev)
		st := fake.Statuses()
		var shown []string
		for i, s := range st {
			shown = append(shown, fmt.Sprintf("%s@%s", s.Status, s.At.Sub(start)))
			if i > 0 && s.At.Sub(st[i-1].At) < 3*time.Second {
				t.Errorf("statuses %s and %s of one thread within 3 s", shown[i-1], shown[i])
			}
			if i > 0 && s.At.Sub(st[i-1].At) >= 2*time.Minute {
				t.Errorf("the status went %s without being shown again (Slack clears it at 2 min)", s.At.Sub(st[i-1].At))
			}
		}
		if len(st) < 5 || st[0].Status != "is thinking…" || st[0].At != start ||
			st[1].Status != "is running `df -h` on web-1…" || st[len(st)-1].Status != "" {
			t.Errorf("statuses %v; want is thinking… at once, then the command, refreshed, then cleared", shown)
		}
		if n := fake.Served429(); n != 0 {
			t.Errorf("%d × 429", n)
		}
	})
}

// Outside assistant threads a question gets a reaction at once, even 20
// together (reactions.add is Tier 3 for the workspace), removed as its
// answer ends; no call is refused or limited.
func TestTwentyQuestionsReactedToAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := slackfake.NewLocal()
		c := localConnector(t, fake, knownThreads{})
		var evs []connectors.Event
		for i := range 20 {
			evs = append(evs, question(fake, "C0OPS", fmt.Sprintf("question %d", i)))
		}
		start := time.Now()
		for _, ev := range evs {
			go c.Acknowledge(t.Context(), ev)
		}
		synctest.Wait()
		for _, ev := range evs {
			if m, _ := fake.Message("C0OPS", ev.Ref.ID); strings.Join(m.Reactions, ",") != "eyes" {
				t.Errorf("question %q shows reactions %v; want eyes", ev.Text, m.Reactions)
			}
		}
		if waited := time.Since(start); waited > 2*time.Second {
			t.Errorf("the 20 questions were marked in %s; want within 2 s", waited)
		}
		for _, ev := range evs {
			go c.Done(t.Context(), ev)
		}
		time.Sleep(2 * time.Minute) // reactions.remove is Tier 2: 20 take a minute
		synctest.Wait()
		for _, ev := range evs {
			if m, _ := fake.Message("C0OPS", ev.Ref.ID); len(m.Reactions) != 0 {
				t.Errorf("question %q still shows %v after its answer", ev.Text, m.Reactions)
			}
		}
		if n, refused := fake.Served429(), len(fake.Reactions()) != 40; n != 0 || refused {
			t.Errorf("%d × 429, %d reaction calls taken; want none and 40", n, len(fake.Reactions()))
		}
	})
}
