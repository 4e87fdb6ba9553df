package bot

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a log's output, safe to read while the desk writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Each delivery acted on is one log line with its source, group, status
// and outcome, and nothing of its body beyond them.
func TestAlertDeliveryIsLoggedOnce(t *testing.T) {
	t.Parallel()
	r := newAlertRig(t, alertConfig(), nil)
	var out lockedBuffer
	r.desk.d.Log = slog.New(slog.NewTextHandler(&out, nil))
	r.record([]byte(strings.Replace(string(groupPayload("disk", "firing")), `"summary":"s"`, `"summary":"s","runbook":"body-only-marker"`, 1)))
	r.desk.drain(context.Background())
	r.record(groupPayload("disk", "resolved"))
	r.desk.drain(context.Background())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d log lines for 2 deliveries:\n%s", len(lines), out.String())
	}
	for i, want := range []string{`source=am delivery=1 outcome="thread posted" group={}:disk status=firing title=disk`,
		`source=am delivery=2 outcome="thread updated" group={}:disk status=resolved`} {
		if !strings.Contains(lines[i], "msg=\"alert delivery\" "+want) {
			t.Errorf("line %d: %s\nwant it to say %s", i, lines[i], want)
		}
	}
	if strings.Contains(out.String(), "body-only-marker") {
		t.Errorf("the log shows the delivery's body: %s", out.String())
	}
}

// Deliveries acted on are forgotten once older than DeliveriesKept; one
// not yet acted on is kept whatever its age.
func TestAlertDeliveriesForgotten(t *testing.T) {
	t.Parallel()
	r := newAlertRig(t, alertConfig(), nil)
	var out lockedBuffer
	r.desk.d.Log = slog.New(slog.NewTextHandler(&out, nil))
	r.record(groupPayload("old-1", "firing"))
	r.record(groupPayload("old-2", "firing"))
	r.desk.drain(context.Background())
	r.record(groupPayload("open", "firing"))
	r.clock = r.clock.Add(deliveriesKept + time.Hour)
	r.record(groupPayload("new", "firing"))
	// Only the newest delivery is acted on now: the open one stays open
	// (as if its source had gone and come back).
	open, err := r.st.Alerts().OpenDeliveries(context.Background(), 10)
	if err != nil || len(open) != 2 {
		t.Fatalf("open deliveries: %d, %v", len(open), err)
	}
	if err := r.desk.act(context.Background(), open[1]); err != nil {
		t.Fatal(err)
	}
	r.desk.forget(context.Background())
	if !strings.Contains(out.String(), "msg=\"forgot old alert deliveries\" deliveries=2 ") {
		t.Errorf("log: %s", out.String())
	}
	open, err = r.st.Alerts().OpenDeliveries(context.Background(), 10)
	if err != nil || len(open) != 1 || !strings.Contains(string(open[0].Body), `"open"`) {
		t.Errorf("the open delivery was not kept: %d, %v", len(open), err)
	}
	r.desk.forget(context.Background())
	if strings.Count(out.String(), "forgot old alert deliveries") != 1 {
		t.Errorf("forgot again what was forgotten, or the new delivery: %s", out.String())
	}
}
