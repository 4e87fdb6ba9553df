package web

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/opsbot/opsbot/connectors"
)

// countingArchive counts the messages read whole from the Archive.
type countingArchive struct {
	*MemoryArchive
	read atomic.Int64
}

func (a *countingArchive) Messages(ctx context.Context, ids []string) ([]StoredMessage, error) {
	out, err := a.MemoryArchive.Messages(ctx, ids)
	a.read.Add(int64(len(out)))
	return out, err
}

func (a *countingArchive) Changed(ctx context.Context, after, upTo uint64, channel, thread string, limit int) ([]StoredMessage, error) {
	out, err := a.MemoryArchive.Changed(ctx, after, upTo, channel, thread, limit)
	a.read.Add(int64(len(out)))
	return out, err
}

// history posts n finished messages of the bot into archive, in threads
// of 10, through a connector of its own (the chat before a restart).
func history(t *testing.T, archive Archive, n int) {
	t.Helper()
	c := unstarted(t, Config{}, archive)
	thread := ""
	for i := range n {
		if i%10 == 0 {
			thread = ""
		}
		ref, err := c.Post(context.Background(), dest("ops", thread), connectors.Message{Text: fmt.Sprintf("history %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		if thread == "" {
			thread = ref.ID
		}
	}
}

// Twenty clients replaying the same history cost one decoding and
// encoding of each message between them, not one each: decoding the
// stored JSON and encoding the frame were most of a replay's CPU, and
// twenty replays starved a person's post (issue 12: 1.42 s). After a
// restart the first replay reads each message once; later replays, and
// changes made since (broadcast live), read none.
func TestReplaysReadAndEncodeEachMessageOnce(t *testing.T) {
	t.Parallel()
	mem := NewMemoryArchive()
	history(t, mem, 100)
	archive := &countingArchive{MemoryArchive: mem}
	c := unstarted(t, Config{}, archive)
	base := serve(t, c)
	replayAll := func(want int) {
		t.Helper()
		s := openStream(t, base, "since=0", nil)
		s.ready()
		for i := range want {
			if m := s.message(); !strings.HasPrefix(m.Text, "history ") {
				t.Fatalf("replayed message %d: %q", i, m.Text)
			}
		}
	}
	for range 5 {
		replayAll(100)
	}
	if n := archive.read.Load(); n != 100 {
		t.Errorf("5 replays of 100 messages read %d messages from the Archive, want 100 (each once)", n)
	}
	for i := range 10 {
		if _, err := c.Post(context.Background(), dest("ops", ""), connectors.Message{Text: fmt.Sprintf("history new %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	replayAll(110)
	if n := archive.read.Load(); n != 100 {
		t.Errorf("after 10 new messages and a replay, %d messages were read from the Archive, want still 100", n)
	}
}

// gatedReads holds every read of a replay (listing or reading a page)
// until released, counting the reads that came in.
type gatedReads struct {
	*MemoryArchive
	entered atomic.Int32
	release chan struct{}
}

func (a *gatedReads) ChangedIDs(ctx context.Context, after, upTo uint64, channel, thread string, limit int) ([]Change, error) {
	a.entered.Add(1)
	<-a.release
	return a.MemoryArchive.ChangedIDs(ctx, after, upTo, channel, thread, limit)
}

func (a *gatedReads) Changed(ctx context.Context, after, upTo uint64, channel, thread string, limit int) ([]StoredMessage, error) {
	a.entered.Add(1)
	<-a.release
	return a.MemoryArchive.Changed(ctx, after, upTo, channel, thread, limit)
}

// Replays read and frame a page holding a replay slot, so that many
// replays cannot take every processor from a person's post; a post never
// waits for a replay, even one whose read is stuck.
func TestReplaysTakeTurnsAndNeverHoldUpAPost(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		mem := NewMemoryArchive()
		history(t, mem, 50)
		archive := &gatedReads{MemoryArchive: mem, release: make(chan struct{})}
		c := unstarted(t, Config{}, archive)
		c.hub.replaySlots = make(chan struct{}, 1)
		ctx := context.Background()
		var wg sync.WaitGroup
		got := make([][]string, 3)
		for i := range got {
			s := &subscriber{}
			upTo := c.hub.subscribe(s)
			wg.Go(func() {
				_, err := c.hub.replay(ctx, s, 0, upTo, func(frames ...[]byte) error {
					for _, f := range frames {
						got[i] = append(got[i], string(f))
					}
					return nil
				})
				if err != nil {
					t.Errorf("replay %d: %v", i, err)
				}
			})
		}
		synctest.Wait() // every replay is waiting: for its read, or for a slot
		if n := archive.entered.Load(); n != 1 {
			t.Errorf("%d replays read at once with one slot, want 1", n)
		}
		if _, err := c.Post(ctx, dest("ops", ""), connectors.Message{Text: "posted while the replays wait"}); err != nil {
			t.Fatalf("a post while replays wait for their reads: %v", err)
		}
		close(archive.release)
		wg.Wait()
		for i, frames := range got {
			if len(frames) != 50 {
				t.Errorf("replay %d sent %d messages, want the 50 of the history", i, len(frames))
				continue
			}
			for j, f := range frames {
				if want := fmt.Sprintf(`"text":"history %d"`, j); !strings.Contains(f, want) {
					t.Errorf("replay %d, message %d: %q, want %s", i, j, f, want)
					break
				}
			}
		}
	})
}

// editOnList changes a message right after a replay listed it, before
// the replay reads it.
type editOnList struct {
	*MemoryArchive
	once sync.Once
	edit func()
}

func (a *editOnList) ChangedIDs(ctx context.Context, after, upTo uint64, channel, thread string, limit int) ([]Change, error) {
	out, err := a.MemoryArchive.ChangedIDs(ctx, after, upTo, channel, thread, limit)
	a.once.Do(a.edit)
	return out, err
}

// A message that changes between a replay's listing and its read is left
// out of the replay: its new state comes live, once, and the replay
// never shows a state newer than the seq it reported.
func TestReplaySkipsAMessageChangedSinceListed(t *testing.T) {
	t.Parallel()
	mem := NewMemoryArchive()
	before := unstarted(t, Config{}, mem)
	ctx := context.Background()
	first, _ := before.Post(ctx, dest("ops", ""), connectors.Message{Text: "first"})
	stream, _ := before.StartStream(ctx, dest("ops", ""), connectors.Message{Text: "being written"})
	before.Post(ctx, dest("ops", ""), connectors.Message{Text: "last"})

	archive := &editOnList{MemoryArchive: mem}
	c := unstarted(t, Config{}, archive)
	archive.edit = func() {
		if err := c.AppendStream(ctx, stream, ", and more"); err != nil {
			t.Error(err)
		}
	}
	s := &subscriber{}
	upTo := c.hub.subscribe(s)
	var replayed []string
	_, err := c.hub.replay(ctx, s, 0, upTo, func(frames ...[]byte) error {
		for _, f := range frames {
			replayed = append(replayed, string(f))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(replayed) != 2 || !strings.Contains(replayed[0], `"id":"`+first.ID+`"`) || !strings.Contains(replayed[1], `"text":"last"`) {
		t.Errorf("replayed %q, want the first and the last message only", replayed)
	}
	live := string(<-s.frames)
	if !strings.Contains(live, `"id":"`+stream.ID+`"`) || !strings.Contains(live, "being written, and more") {
		t.Errorf("live after the replay: %q, want the changed message", live)
	}
}

// The frames kept for replays stay within their bound, the least
// recently used going first.
func TestFrameCacheIsBounded(t *testing.T) {
	t.Parallel()
	c := newFrameCache(10 * frameCost(make([]byte, 1000)))
	for seq := range uint64(10) {
		c.put(cachedFrame{id: "m" + strconv.FormatUint(seq, 10), seq: seq, frame: make([]byte, 1000)})
	}
	c.get(0) // used now: frame 1 is the least recently used
	for seq := uint64(10); seq < 100; seq++ {
		c.put(cachedFrame{id: "m" + strconv.FormatUint(seq, 10), seq: seq, frame: make([]byte, 1000)})
		if seq == 10 {
			if _, ok := c.get(1); ok {
				t.Error("frame 1, the least recently used, was kept past the bound")
			}
			if _, ok := c.get(0); !ok {
				t.Error("frame 0, just used, was evicted first")
			}
		}
	}
	if c.size > c.limit || len(c.bySeq) != 10 {
		t.Errorf("%d frames, %d bytes kept, want 10 within %d", len(c.bySeq), c.size, c.limit)
	}
	if _, ok := c.get(99); !ok {
		t.Error("the newest frame was evicted")
	}
}

// A frame made around the stored JSON is the frame the decoded message
// makes: the same lines and the same JSON; content that is not the hub's
// own is left to the decoder.
func TestStoredFrameIsTheEncodedFrame(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 24, 18, 0, 0, 123456789, time.UTC)
	bodies := []body{
		{Text: ""},
		{Text: "plain"},
		{Text: "<script>alert('x')</script> & \"quotes\" \\ back\nline\ttab \u2028 é 🙂 \x01 \xff"},
		{Text: "card", Context: "asked by @bob", Fields: []wireField{{Title: "host", Value: "web1"}},
			Buttons: []wireButton{{ActionID: "approve", Value: "a1", Label: "Approve", Style: "primary"}, {ActionID: "deny", Value: "a1", Label: "Deny"}}},
	}
	for i, b := range bodies {
		for _, bot := range []bool{false, true} {
			m := &message{id: "m" + strconv.Itoa(40+i), channel: "ops", thread: "m40", user: "al\"ice", bot: bot, body: b,
				finished: !bot, seq: uint64(100 + i), created: at, updated: at.Add(time.Second)}
			s := m.stored()
			got, ok := storedFrame(s)
			if !ok {
				t.Errorf("body %d: not framed from the stored JSON", i)
				continue
			}
			decoded, err := fromStored(s)
			if err != nil {
				t.Fatal(err)
			}
			sameFrame(t, got, messageFrame(decoded.view()))
		}
	}
	s := (&message{id: "m1", channel: "ops", thread: "m1", body: body{Text: "x"}}).stored()
	for _, raw := range []string{`{"text":"a",` + "\n" + `"context":"b"}`, `{"context":"b","text":"a"}`, ``, `[]`} {
		s.Message = json.RawMessage(raw)
		if _, ok := storedFrame(s); ok {
			t.Errorf("%q was framed as it is", raw)
		}
	}
}

// sameFrame checks that two frames have the same lines but for the data,
// whose JSON is the same.
func sameFrame(t *testing.T, got, want []byte) {
	t.Helper()
	g, w := strings.SplitN(string(got), "data: ", 2), strings.SplitN(string(want), "data: ", 2)
	if len(g) != 2 || len(w) != 2 || g[0] != w[0] || !strings.HasSuffix(g[1], "}\n\n") {
		t.Fatalf("frame\n%q, want\n%q", got, want)
	}
	var gv, wv map[string]any
	if err := json.Unmarshal([]byte(g[1]), &gv); err != nil {
		t.Fatalf("frame %q: %v", got, err)
	}
	json.Unmarshal([]byte(w[1]), &wv)
	if !reflect.DeepEqual(gv, wv) {
		t.Errorf("frame data\n%s, want\n%s", g[1], w[1])
	}
}

// The cache keeps a message's latest frame only: an answer's edits do
// not fill it, and a state read late never replaces a later one.
func TestFrameCacheKeepsEachMessagesLatest(t *testing.T) {
	t.Parallel()
	c := newFrameCache(1 << 20)
	for seq := range uint64(50) { // one answer, edited 50 times
		c.put(cachedFrame{id: "m7", seq: seq + 7, frame: []byte("frame")})
	}
	if len(c.bySeq) != 1 || c.size != frameCost([]byte("frame")) {
		t.Errorf("%d frames (%d bytes) kept for one message, want 1", len(c.bySeq), c.size)
	}
	c.put(cachedFrame{id: "m7", seq: 20, frame: []byte("older")})
	if f, ok := c.get(56); !ok || string(f.frame) != "frame" {
		t.Errorf("the latest frame: %q, %v; an older state replaced it", f.frame, ok)
	}
	if _, ok := c.get(20); ok {
		t.Error("an older state was kept beside the latest")
	}
}
