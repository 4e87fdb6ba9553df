package main

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/store/leader"
)

// TestPodRoleRetries: a patch the API server refuses (no such pod yet)
// is logged once, in words, and retried; once it can be, the pod is
// labelled standby, and lead relabels it leader.
func TestPodRoleRetries(t *testing.T) {
	c := newHACluster(t)
	for _, kv := range c.env { // InCluster reads the process's environment
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	logs := &recordedLog{msgs: make(chan slog.Record, 64)}
	ha := leader.Settings{Enabled: true, Namespace: "ops", Identity: "opsbot-a", ServiceAccount: c.sa, RetryPeriod: 20 * time.Millisecond}
	pod := labelPod(t.Context(), ha.WithDefaults(func(string) string { return "" }), slog.New(logs))
	defer pod.stop()
	warn := <-logs.msgs
	if warn.Level != slog.LevelWarn || !strings.Contains(warn.Message, "cannot label this pod with its role") {
		t.Fatalf("a refused patch logged %s %q", warn.Level, warn.Message)
	}
	c.api.AddPod("ops", "opsbot-a")
	b := &haBot{c: c, pod: "opsbot-a"}
	b.awaitRole(t, "standby", 30*time.Second)
	pod.lead()
	b.awaitRole(t, "leader", 30*time.Second)
	pod.stop()
	pod.stop()
	close(logs.msgs)
	for r := range logs.msgs {
		if r.Level >= slog.LevelWarn {
			t.Errorf("logged again: %s %q", r.Level, r.Message)
		}
	}
}

// recordedLog is a slog.Handler that passes each record to msgs.
type recordedLog struct{ msgs chan slog.Record }

func (h *recordedLog) Enabled(context.Context, slog.Level) bool      { return true }
func (h *recordedLog) Handle(_ context.Context, r slog.Record) error { h.msgs <- r; return nil }
func (h *recordedLog) WithAttrs([]slog.Attr) slog.Handler            { return h }
func (h *recordedLog) WithGroup(string) slog.Handler                 { return h }
