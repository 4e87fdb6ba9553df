package streamretry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/opsbot/opsbot/agent"
)

// errBusy is a failure the test policy retries; its header, if any, is
// what the server asked.
type errBusy struct{ header http.Header }

func (e *errBusy) Error() string { return "busy" }

var errRefused = errors.New("refused")

// run is what one Run did: the calls made, the waits asked, the retries
// reported and the events the caller saw.
type run struct {
	calls   int
	waits   []time.Duration
	retries []string
	events  []agent.StreamEvent
}

// fixture runs p over a call that fails with the errors of fails in turn
// (nil ends it), emitting text first on the attempts listed in showOn.
type fixture struct {
	fails      []error
	showOn     map[int]bool
	stopAfter  int // the caller stops after this many events; 0: never
	maxAttempt int
	sleep      func(ctx context.Context, d time.Duration) error
}

func (f fixture) run(ctx context.Context) run {
	var r run
	p := &Policy{
		Name:        "test",
		MaxAttempts: cmpInt(f.maxAttempt, 4),
		Retryable: func(err error) bool {
			var b *errBusy
			return errors.As(err, &b) || Broken(err)
		},
		Header: func(err error) http.Header {
			var b *errBusy
			if errors.As(err, &b) {
				return b.header
			}
			return nil
		},
		Sleep: func(ctx context.Context, d time.Duration) error {
			r.waits = append(r.waits, d)
			if f.sleep != nil {
				return f.sleep(ctx, d)
			}
			return ctx.Err()
		},
		OnRetry: func(wait time.Duration, err error) { r.retries = append(r.retries, wait.String()+" "+err.Error()) },
	}
	out := NewEmitter(func(ev agent.StreamEvent) bool {
		r.events = append(r.events, ev)
		return f.stopAfter == 0 || len(r.events) < f.stopAfter
	})
	call := func() error {
		r.calls++
		if f.showOn[r.calls] {
			out.Emit(agent.StreamEvent{Kind: agent.EventText, Text: "hi"})
		}
		if r.calls > len(f.fails) {
			return nil
		}
		return f.fails[r.calls-1]
	}
	describe := func(err error, attempts int, shown bool) error {
		return fmt.Errorf("described(%d, %v): %w", attempts, shown, err)
	}
	p.Run(ctx, out, call, describe)
	return r
}

func cmpInt(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

func retryIn(h, v string) *errBusy { return &errBusy{header: http.Header{h: {v}}} }

func TestRun(t *testing.T) {
	t.Parallel()
	busy := &errBusy{}
	tests := []struct {
		name      string
		f         fixture
		wantCalls int
		wantWaits []time.Duration
		wantErr   string // substring of the final EventError; empty: none
	}{
		{"success at once", fixture{}, 1, nil, ""},
		{"backoff 1s, 2s, 4s, then out of attempts", fixture{fails: []error{busy, busy, busy, busy}}, 4, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, "described(4, false): busy"},
		{"backoff up to 16s", fixture{fails: []error{busy, busy, busy, busy, busy, busy}, maxAttempt: 7}, 7, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 16 * time.Second}, ""},
		{"retry then success", fixture{fails: []error{busy}}, 2, []time.Duration{time.Second}, ""},
		{"server's wait", fixture{fails: []error{retryIn("Retry-After", "7")}}, 2, []time.Duration{7 * time.Second}, ""},
		{"retry-after-ms wins", fixture{fails: []error{&errBusy{header: http.Header{"Retry-After": {"7"}, "Retry-After-Ms": {"250"}}}}}, 2, []time.Duration{250 * time.Millisecond}, ""},
		{"a wait of MaxWait is honoured", fixture{fails: []error{retryIn("Retry-After", "60")}}, 2, []time.Duration{time.Minute}, ""},
		{"over MaxWait: refused at once", fixture{fails: []error{retryIn("Retry-After", "61")}}, 1, nil, "described(1, false): busy"},
		{"garbage header: backoff", fixture{fails: []error{retryIn("Retry-After", "soon")}}, 2, []time.Duration{time.Second}, ""},
		{"not retryable", fixture{fails: []error{errRefused}}, 1, nil, "described(1, false): refused"},
		{"cancelled context error is never retried", fixture{fails: []error{fmt.Errorf("wrapped: %w", context.Canceled)}}, 1, nil, "described(1, false)"},
		{"broken connection after text: no retry", fixture{fails: []error{ErrEndedEarly}, showOn: map[int]bool{1: true}}, 1, nil, "described(1, true)"},
		{"broken connection before text: retried", fixture{fails: []error{ErrEndedEarly}}, 2, []time.Duration{time.Second}, ""},
		{"caller stopped: nothing more", fixture{fails: []error{busy}, showOn: map[int]bool{1: true}, stopAfter: 1}, 1, nil, ""},
		{"one attempt allowed", fixture{fails: []error{busy}, maxAttempt: 1}, 1, nil, "described(1, false): busy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := tt.f.run(context.Background())
			if r.calls != tt.wantCalls || !reflect.DeepEqual(r.waits, tt.wantWaits) {
				t.Errorf("calls %d, waits %v; want %d, %v", r.calls, r.waits, tt.wantCalls, tt.wantWaits)
			}
			var errs []string
			for _, ev := range r.events {
				if ev.Kind == agent.EventError {
					errs = append(errs, ev.Err.Error())
				}
			}
			switch {
			case tt.wantErr == "" && len(errs) != 0:
				t.Errorf("errors %q; want none", errs)
			case tt.wantErr != "" && (len(errs) != 1 || !strings.Contains(errs[0], tt.wantErr)):
				t.Errorf("errors %q; want one containing %q", errs, tt.wantErr)
			}
			if len(r.retries) != len(tt.wantWaits) {
				t.Errorf("OnRetry called %d times; want %d", len(r.retries), len(tt.wantWaits))
			}
		})
	}
}

// TestOnRetry reports the wait and the error worded as if nothing was shown.
func TestOnRetry(t *testing.T) {
	t.Parallel()
	r := fixture{fails: []error{retryIn("Retry-After", "2")}}.run(context.Background())
	if want := []string{"2s described(1, false): busy"}; !reflect.DeepEqual(r.retries, want) {
		t.Errorf("retries %q; want %q", r.retries, want)
	}
}

// TestCancelDuringWait: a cancel while waiting ends the response with the
// provider's name and context.Canceled, and no further call.
func TestCancelDuringWait(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		f := fixture{fails: []error{&errBusy{}}, sleep: func(ctx context.Context, d time.Duration) error {
			go func() { time.Sleep(d / 2); cancel() }()
			return Sleep(ctx, d)
		}}
		r := f.run(ctx)
		if r.calls != 1 || len(r.events) != 1 {
			t.Fatalf("calls %d, events %v; want 1 call and one error", r.calls, r.events)
		}
		err := r.events[0].Err
		if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "test: cancelled while waiting to retry") {
			t.Errorf("err %v; want test: cancelled while waiting to retry: context canceled", err)
		}
	})
}

// TestSleep waits the whole duration, or returns ctx.Err() when ctx ends
// first; time is virtual.
func TestSleep(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if err := Sleep(context.Background(), time.Hour); err != nil || time.Since(start) != time.Hour {
			t.Errorf("Sleep = %v after %v; want nil after 1h", err, time.Since(start))
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start = time.Now()
		if err := Sleep(ctx, time.Hour); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != time.Second {
			t.Errorf("Sleep = %v after %v; want DeadlineExceeded after 1s", err, time.Since(start))
		}
	})
}
