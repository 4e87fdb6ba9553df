package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// client is the HTTP client of every scenario: enough idle connections
// that a hundred posters reuse theirs.
var client = &http.Client{Transport: &http.Transport{MaxIdleConns: 2000, MaxIdleConnsPerHost: 2000}}

// posted is POST /api/messages' answer.
type posted struct {
	Status int
	ID     string
	Thread string
	Seq    uint64
	Took   time.Duration
}

// post adds text to thread ("" starts one) as user.
func (b *bot) post(user, thread, text string) posted {
	body, _ := json.Marshal(map[string]string{"channel": "ops", "thread": thread, "user": user, "text": text})
	t0 := time.Now()
	resp, err := client.Post(b.base+"/api/messages", "application/json", bytes.NewReader(body))
	if err != nil {
		return posted{Status: -1, Took: time.Since(t0)}
	}
	defer resp.Body.Close()
	var res posted
	json.NewDecoder(resp.Body).Decode(&res)
	res.Status, res.Took = resp.StatusCode, time.Since(t0)
	return res
}

// seq is the chat's sequence number now.
func (b *bot) seq() uint64 {
	resp, err := client.Get(b.base + "/api/channels")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var res struct{ Seq uint64 }
	json.NewDecoder(resp.Body).Decode(&res)
	return res.Seq
}

// view is one message update of the event stream.
type view struct {
	ID, Thread, Text, Context string
	Bot, Finished             bool
	Seq                       uint64
}

// follow reads the event stream from since (-1: only what comes) and
// calls fn with each message update until ctx ends or fn returns false;
// ready is called once the stream is open.
func (b *bot) follow(ctx context.Context, since int64, ready func(), fn func(view) bool) error {
	url := b.base + "/api/events"
	if since >= 0 {
		url += "?since=" + itoa(uint64(since))
	}
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(make([]byte, 1<<20), 4<<20)
	event := ""
	for lines.Scan() {
		l := lines.Text()
		switch {
		case strings.HasPrefix(l, "event: "):
			event = strings.TrimPrefix(l, "event: ")
		case strings.HasPrefix(l, "data: ") && event == "ready":
			if ready != nil {
				ready()
				ready = nil
			}
		case strings.HasPrefix(l, "data: ") && event == "message":
			var v view
			if json.Unmarshal([]byte(strings.TrimPrefix(l, "data: ")), &v) == nil && !fn(v) {
				return nil
			}
		}
	}
	return lines.Err()
}

// replay reads the event stream from since=0 until the message update
// numbered upTo or later, looking only at the frames' id lines; it
// returns how many updates it read.
func (b *bot) replay(ctx context.Context, upTo uint64) (int, error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", b.base+"/api/events?since=0", nil)
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	lines := bufio.NewReaderSize(resp.Body, 64<<10)
	n := 0
	for {
		l, err := lines.ReadSlice('\n')
		for err == bufio.ErrBufferFull { // a long data line: the rest of it
			_, err = lines.ReadSlice('\n')
		}
		if err != nil {
			return n, err
		}
		if bytes.HasPrefix(l, []byte("id: ")) {
			n++
			if id, _ := strconv.ParseUint(string(bytes.TrimSpace(l[4:])), 10, 64); id >= upTo {
				return n, nil
			}
		}
	}
}

// watcher follows the whole chat and tells who waits for a thread when
// the bot has answered there: a finished message of the bot saying how a
// command on local ended.
type watcher struct {
	mu       sync.Mutex
	answers  map[string]int // thread → answers
	messages map[string]map[string]view
	seen     map[string]chan struct{} // message id → closed once seen
	changed  chan struct{}
	cancel   context.CancelFunc
}

func (b *bot) watch() *watcher {
	ctx, cancel := context.WithCancel(context.Background())
	w := &watcher{answers: map[string]int{}, messages: map[string]map[string]view{}, seen: map[string]chan struct{}{},
		changed: make(chan struct{}), cancel: cancel}
	ready := make(chan struct{})
	go b.follow(ctx, int64(b.seq()), func() { close(ready) }, w.add)
	<-ready
	return w
}

func (w *watcher) add(v view) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.messages[v.Thread] == nil {
		w.messages[v.Thread] = map[string]view{}
	}
	old, had := w.messages[v.Thread][v.ID]
	w.messages[v.Thread][v.ID] = v
	if answer(v) && !(had && answer(old)) {
		w.answers[v.Thread]++
	}
	if ch := w.seenLocked(v.ID); ch != nil {
		close(ch)
		w.seen[v.ID] = nil
	}
	close(w.changed)
	w.changed = make(chan struct{})
	return true
}

// answer reports whether v is the bot's finished report of a command.
func answer(v view) bool {
	return v.Bot && v.Finished && strings.Contains(v.Context, " on local: ")
}

func (w *watcher) seenLocked(id string) chan struct{} {
	ch, ok := w.seen[id]
	if !ok {
		ch = make(chan struct{})
		w.seen[id] = ch
	}
	return ch
}

// waitSeen waits until the stream showed message id.
func (w *watcher) waitSeen(ctx context.Context, id string) bool {
	w.mu.Lock()
	ch := w.seenLocked(id)
	w.mu.Unlock()
	if ch == nil {
		return true
	}
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	}
}

// waitAnswers waits until thread has n answers.
func (w *watcher) waitAnswers(ctx context.Context, thread string, n int) bool {
	for {
		w.mu.Lock()
		got, changed := w.answers[thread], w.changed
		w.mu.Unlock()
		if got >= n {
			return true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		}
	}
}

// texts counts the bot's finished messages in thread whose text holds s.
func (w *watcher) texts(thread, s string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, v := range w.messages[thread] {
		if v.Bot && strings.Contains(v.Text, s) {
			n++
		}
	}
	return n
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
