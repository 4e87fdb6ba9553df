package bot

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/connectors"
)

// levelLog hands each record's message and level to a channel.
type levelLog struct{ recs chan slog.Record }

func (l levelLog) Enabled(context.Context, slog.Level) bool { return true }
func (l levelLog) Handle(_ context.Context, r slog.Record) error {
	select {
	case l.recs <- r:
	default:
	}
	return nil
}
func (l levelLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l levelLog) WithGroup(string) slog.Handler      { return l }

// settledLevel waits for SettledAfterStart and returns its level.
func settledLevel(t *testing.T, l levelLog) slog.Level {
	t.Helper()
	guard := time.NewTimer(2 * time.Minute)
	defer guard.Stop()
	for {
		select {
		case r := <-l.recs:
			if r.Message == SettledAfterStart {
				return r.Level
			}
		case <-guard.C:
			t.Fatalf("no %q within two minutes of the start", SettledAfterStart)
		}
	}
}

// A brand-new database has nothing a previous run left: the start does
// not tell at Info that it recovered (a supervisor still finds the line
// at Debug); a restart that acted on what was left does.
func TestNuRecoveredIsInfoOnlyWhenSomethingWasLeft(t *testing.T) {
	t.Parallel()
	fresh := levelLog{recs: make(chan slog.Record, 1000)}
	newHarnessWith(t, botOptions{log: slog.New(fresh)})
	if lvl := settledLevel(t, fresh); lvl != slog.LevelDebug {
		t.Errorf("on a new database %q is logged at %s; want Debug: there was nothing to recover", SettledAfterStart, lvl)
	}

	h := newHarness(t, approvals.GateConfig{}, nil)
	target := filepath.Join(h.dir, "runs.txt")
	h.say("alice", "t1", "run local echo ran >> "+target)
	h.eventually("the approval card", h.has("t1", "Approval needed"))
	_, ref, _ := h.find("t1", "Approval needed")
	card := h.msg(ref)
	h.restart(botOptions{held: true})
	for _, btn := range card.msg.Buttons {
		if btn.ActionID == ActionApprove {
			h.bot.Handle(context.Background(), connectors.Event{ID: "click-1", Kind: connectors.EventAction, Platform: "web", Channel: "ops",
				Thread: "t1", User: connectors.User{ID: "bob", Name: "bob"}, ActionID: btn.ActionID, Value: btn.Value, Ref: ref})
		}
	}
	left := levelLog{recs: make(chan slog.Record, 1000)}
	h.restart(botOptions{log: slog.New(left)})
	if lvl := settledLevel(t, left); lvl != slog.LevelInfo {
		t.Errorf("after a restart that acted on a click on record %q is logged at %s; want Info", SettledAfterStart, lvl)
	}
}
