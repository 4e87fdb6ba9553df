package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/opsbot/opsbot/bot/render"
	"github.com/opsbot/opsbot/connectors"
)

// streamConn is a platform with native streaming, like Slack's
// chat.startStream/appendStream/stopStream: it records the calls and
// refuses an append to a stopped stream, or faster than its interval. A
// stream older than lifetime (when set) is ended by the platform, as
// Slack's is: it keeps what was appended, and refuses changes with an
// error wrapping connectors.ErrStreamEnded. What each message shows is
// kept in fakeConn's msgs.
type streamConn struct {
	*fakeConn
	// lifetime is how long the platform keeps a stream open, whatever
	// the connector declares in its Limits (0: for ever).
	lifetime time.Duration
	mu       sync.Mutex
	streams  map[string]*fakeStream
	calls    []string
	refused  int
	expired  int // changes refused because the platform ended the stream
}

type fakeStream struct {
	text    string
	stopped bool
	final   connectors.Message
	started time.Time
	last    time.Time
	appends int
}

func newStreamConn(limits connectors.Limits) *streamConn {
	limits.NativeStreaming = true
	return &streamConn{fakeConn: newFakeConn(limits), streams: map[string]*fakeStream{}}
}

var _ connectors.Streamer = (*streamConn)(nil)

func (s *streamConn) StartStream(ctx context.Context, d connectors.Dest, m connectors.Message) (connectors.Ref, error) {
	ref, err := s.fakeConn.add(d, m, false)
	if err != nil {
		return ref, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.streams[ref.ID] = &fakeStream{text: m.Text, started: time.Now(), last: time.Now()}
	s.calls = append(s.calls, "start")
	return ref, nil
}

func (s *streamConn) AppendStream(_ context.Context, ref connectors.Ref, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.streams[ref.ID]
	if err := s.ended(st); err != nil {
		return err
	}
	if st == nil || st.stopped || time.Since(st.last) < s.limits.EditInterval {
		s.refused++
		return fmt.Errorf("stream %s: append refused (stopped %v, %v since the last change)", ref.ID, st != nil && st.stopped, func() time.Duration {
			if st == nil {
				return -1
			}
			return time.Since(st.last)
		}())
	}
	st.text += text
	st.last = time.Now()
	st.appends++
	s.calls = append(s.calls, "append")
	s.fakeConn.mu.Lock()
	s.fakeConn.msgs[ref.ID].msg.Text = st.text
	s.fakeConn.mu.Unlock()
	return nil
}

// ended is the platform's error for a change to a stream past its
// lifetime; s.mu is held.
func (s *streamConn) ended(st *fakeStream) error {
	if st == nil || st.stopped || s.lifetime <= 0 || time.Since(st.started) < s.lifetime {
		return nil
	}
	s.expired++
	return fmt.Errorf("message_not_in_streaming_state: %w", connectors.ErrStreamEnded)
}

func (s *streamConn) StopStream(_ context.Context, ref connectors.Ref, final connectors.Message) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.streams[ref.ID]
	if err := s.ended(st); err != nil {
		return err
	}
	if st == nil || st.stopped {
		s.refused++
		return errors.New("stream not open")
	}
	st.stopped, st.final = true, final
	s.calls = append(s.calls, "stop")
	s.fakeConn.mu.Lock()
	s.fakeConn.msgs[ref.ID].msg = final
	s.fakeConn.mu.Unlock()
	s.fakeConn.finish(ref)
	return nil
}

func TestRendererPrefersNativeStreaming(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		conn := newStreamConn(connectors.Limits{MaxText: 3000, EditInterval: time.Second, EditsPerMinute: 50})
		stop := connectors.Button{ActionID: ActionStop, Label: "Stop"}
		r := render.NewRenderer(t.Context(), conn, render.NewEditBudget(50), nil, nil, connectors.Dest{Platform: "fake", Channel: "C1", Thread: "T1"}, stop)
		var want strings.Builder
		for i := range 100 {
			d := fmt.Sprintf("w%d ", i)
			r.Write(d)
			want.WriteString(d)
			time.Sleep(100 * time.Millisecond)
		}
		r.Status("`df -h` on local: exit 0", false)
		r.Close(context.Background(), nil)
		conn.mu.Lock()
		defer conn.mu.Unlock()
		if len(conn.streams) != 1 || conn.refused != 0 {
			t.Fatalf("%d streams, %d refused calls; want 1 and 0", len(conn.streams), conn.refused)
		}
		for _, st := range conn.streams {
			if !st.stopped || !strings.HasPrefix(want.String(), st.text) || st.final.Text != want.String() {
				t.Errorf("streamed %q, final %q; want %q", st.text, st.final.Text, want.String())
			}
			if st.final.Context == "" || len(st.final.Buttons) != 0 {
				t.Errorf("final message: context %q, %d buttons", st.final.Context, len(st.final.Buttons))
			}
			if st.appends < 5 || st.appends > 11 {
				t.Errorf("%d appends for 10 s of text at ≤1/s", st.appends)
			}
		}
		if edits := len(conn.reqs()) - 1; edits != 0 {
			t.Errorf("%d edits spent while streaming natively", edits)
		}
		if conn.calls[0] != "start" || conn.calls[len(conn.calls)-1] != "stop" {
			t.Errorf("calls = %v", conn.calls)
		}
	})
}

func TestRendererNativeStreamSplitsPastTheLimit(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		conn := newStreamConn(connectors.Limits{MaxText: 500, EditInterval: time.Second})
		r := render.NewRenderer(t.Context(), conn, render.NewEditBudget(0), nil, nil, connectors.Dest{Platform: "fake", Channel: "C1", Thread: "T1"})
		var want strings.Builder
		for i := range 120 {
			d := fmt.Sprintf("line %03d of the log\n", i)
			r.Write(d)
			want.WriteString(d)
			time.Sleep(50 * time.Millisecond)
		}
		r.Close(context.Background(), errors.New("model disconnected"))
		conn.mu.Lock()
		defer conn.mu.Unlock()
		var got strings.Builder
		for _, id := range conn.order { // the answer's pages, in order
			st := conn.streams[id]
			if st == nil {
				got.WriteString(conn.msgs[id].msg.Text)
				continue
			}
			if !st.stopped {
				t.Errorf("stream %s was never stopped", id)
			}
			if len(st.final.Text) > 500 {
				t.Errorf("stream %s ended with %d bytes", id, len(st.final.Text))
			}
			got.WriteString(st.final.Text)
		}
		if len(conn.order) < 3 {
			t.Errorf("%d pages for %d bytes with a 500 limit", len(conn.order), want.Len())
		}
		if !strings.HasPrefix(got.String(), want.String()) || !strings.HasSuffix(got.String(), "⚠️ model disconnected") {
			t.Errorf("the pages do not hold the answer and then the error:\n%s", got.String())
		}
		if conn.refused != 0 {
			t.Errorf("%d calls refused", conn.refused)
		}
	})
}
