package bot

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/opsbot/opsbot/approvals/redact"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/store"
)

// StreamRecorder keeps a record of messages being streamed, so that a
// restart can finalize those a crash left half-written. *store.Store
// implements it.
type StreamRecorder interface {
	RecordStreaming(ctx context.Context, m store.PostedMessage) (store.PostedMessage, error)
	UpdateStreamingText(ctx context.Context, id int64, text string) error
	FinishStreaming(ctx context.Context, id int64) error
}

// finisher is what a connector offers when its clients want to know a
// message is complete (the web API's finished flag).
type finisher interface {
	Finish(ctx context.Context, ref connectors.Ref) error
}

// Renderer streams one answer into a thread by editing messages: the first
// visible text is posted at once, later text is coalesced into at most one
// edit per interval (the platform's per-message limit, stretched to share
// the workspace's budget), and text past the platform's length limit goes
// on in a new message. Tool activity shows in the message's context line,
// so the answer text is exactly what the model said.
type Renderer struct {
	conn    connectors.Connector
	budget  *EditBudget
	rec     StreamRecorder // may be nil
	log     *slog.Logger
	channel string
	thread  string
	limits  connectors.Limits
	// buttons go on the message being streamed (e.g. Stop).
	buttons []connectors.Button
	// red is the redactor of the connector, when it sits behind one: what
	// is shown of the answer is redacted as a whole, not delta by delta.
	red *redact.Redactor

	mu       sync.Mutex
	text     strings.Builder // the answer so far
	replaced bool            // the text is a view set by Replace, not a growing answer
	settled  int             // the text is complete up to here: tool activity followed it
	status   []string        // recent tool activity
	errText  string
	dirty    bool
	done     bool
	wake     chan struct{}
	finished chan struct{}

	// owned by run
	pages    []page
	shownAt  time.Time
	failures int // flushes that could not show a page
}

// page is one platform message of the answer.
type page struct {
	ref      connectors.Ref
	recordID int64
	shown    string // what the platform shows now
	// streaming is set while the page is a native stream; streamed is the
	// text appended to it so far.
	streaming bool
	streamed  string
}

// NewRenderer starts a renderer for an answer in a thread. Stop it with
// Close.
func NewRenderer(conn connectors.Connector, budget *EditBudget, rec StreamRecorder, log *slog.Logger, channel, thread string, buttons ...connectors.Button) *Renderer {
	r := &Renderer{conn: conn, budget: budget, rec: rec, log: log, channel: channel, thread: thread,
		limits: conn.Limits(), buttons: buttons, red: redactorOf(conn), wake: make(chan struct{}, 1), finished: make(chan struct{})}
	if r.log == nil {
		r.log = slog.Default()
	}
	leave := budget.Join()
	go func() {
		defer close(r.finished)
		defer leave()
		r.run()
	}()
	return r
}

// Write adds a piece of the answer.
func (r *Renderer) Write(delta string) {
	if delta == "" {
		return
	}
	r.mu.Lock()
	r.text.WriteString(delta)
	r.dirty = true
	r.mu.Unlock()
	r.poke()
}

// Replace makes text the whole of what the message shows, for views that
// do not only grow (a command's output showing its tail).
func (r *Renderer) Replace(text string) {
	r.mu.Lock()
	r.text.Reset()
	r.text.WriteString(text)
	r.dirty, r.replaced = true, true
	r.mu.Unlock()
	r.poke()
}

// MaxText is the most text one message of the platform holds.
func (r *Renderer) MaxText() int { return r.maxText() }

// Status shows a line of tool activity; replace swaps the last line (a
// "running…" line becoming its result).
func (r *Renderer) Status(line string, replace bool) {
	r.mu.Lock()
	r.settled = r.text.Len()
	if replace && len(r.status) > 0 {
		r.status[len(r.status)-1] = line
	} else {
		r.status = append(r.status, line)
	}
	if len(r.status) > 3 {
		r.status = r.status[len(r.status)-3:]
	}
	r.dirty = true
	r.mu.Unlock()
	r.poke()
}

// Close ends the stream: a final edit shows everything, with err appended
// when the answer ended in an error, and the buttons go. It returns once
// the platform has the final text (or ctx ends).
func (r *Renderer) Close(ctx context.Context, err error) {
	r.mu.Lock()
	if err != nil {
		r.errText = err.Error()
	}
	r.done, r.dirty = true, true
	r.mu.Unlock()
	r.poke()
	select {
	case <-r.finished:
	case <-ctx.Done():
	}
}

// Text is the answer so far.
func (r *Renderer) Text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.text.String()
}

func (r *Renderer) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// run owns the platform messages: it waits for changes, then shows them no
// faster than the interval allows.
func (r *Renderer) run() {
	ctx := context.Background()
	for {
		<-r.wake
		for {
			r.mu.Lock()
			dirty := r.dirty
			r.mu.Unlock()
			if !dirty {
				break
			}
			if len(r.pages) > 0 {
				r.pace(ctx)
			}
			if done := r.flush(ctx); done {
				r.finish(ctx)
				return
			}
		}
	}
}

// pace waits until this message may be edited again (the platform's
// per-message limit; the final edit waits too). The shared workspace
// budget is waited for when the edit is sent.
func (r *Renderer) pace(ctx context.Context) {
	wait := time.Until(r.shownAt.Add(r.limits.EditInterval))
	if wait <= 0 {
		return
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// flush brings the platform up to date with the current state, and
// reports whether that state was final.
func (r *Renderer) flush(ctx context.Context) bool {
	r.mu.Lock()
	text, status, errText, done := r.text.String(), strings.Join(r.status, "\n"), r.errText, r.done
	replaced, settled := r.replaced, r.settled
	r.dirty = false
	r.mu.Unlock()
	if r.red != nil {
		if !done && !replaced {
			text = shownSoFar(text, settled)
		}
		text = r.red.String(text)
	}
	if errText != "" && text != "" {
		text += "\n\n⚠️ " + errText
	} else if errText != "" {
		text = "⚠️ " + errText
	}
	if text == "" && status == "" && (!done || len(r.pages) == 0) {
		// Nothing to show: an answer that ends without a word posts no
		// empty message.
		return done
	}
	pages := splitText(text, r.maxText())
	for i, p := range pages {
		msg := connectors.Message{Text: p.String()}
		last := i == len(pages)-1
		if last {
			msg.Context = status
			if !done {
				msg.Buttons = r.buttons
			}
		}
		if !r.show(ctx, i, msg, done || !last) {
			// A page that could not be shown: later pages wait for it,
			// and the next flush tries again — a few times, once the
			// answer is complete, before giving up on the platform.
			r.failures++
			r.shownAt = time.Now()
			if done && r.failures >= 3 {
				r.log.Warn("giving up on showing the answer", "channel", r.channel, "thread", r.thread)
				return true
			}
			r.mu.Lock()
			r.dirty = true
			r.mu.Unlock()
			r.poke()
			return false
		}
	}
	r.shownAt = time.Now()
	return done
}

// show posts page i or edits it if it changed, waiting out rate limits;
// it reports whether the page now shows msg. complete says the page will
// not change again.
func (r *Renderer) show(ctx context.Context, i int, msg connectors.Message, complete bool) bool {
	if i > len(r.pages) {
		return false // an earlier page is missing
	}
	key := msg.Text + "\x00" + msg.Context + fmt.Sprint(len(msg.Buttons))
	if i < len(r.pages) && r.pages[i].shown == key && !(complete && r.pages[i].streaming) {
		return true
	}
	for attempt := 0; attempt < 5; attempt++ {
		err := r.send(ctx, i, msg, complete)
		if err == nil {
			if i < len(r.pages) {
				r.pages[i].shown = key
			}
			return true
		}
		wait, limited := connectors.RetryAfter(err)
		if !limited {
			r.log.Warn("stream update failed", "channel", r.channel, "err", err)
			return false
		}
		r.budget.Penalize(wait)
		time.Sleep(wait)
	}
	return false
}

func (r *Renderer) send(ctx context.Context, i int, msg connectors.Message, complete bool) error {
	if st, ok := r.streamer(); ok {
		return r.sendStream(ctx, st, i, msg, complete)
	}
	if i < len(r.pages) {
		if err := r.budget.Wait(ctx); err != nil {
			return err
		}
		if err := r.conn.Edit(ctx, r.pages[i].ref, msg); err != nil {
			return err
		}
		r.record(ctx, i, msg.Text)
		return nil
	}
	ref, err := r.conn.Post(ctx, r.channel, r.thread, msg)
	if err != nil {
		return err
	}
	r.pages = append(r.pages, page{ref: ref})
	r.record(ctx, i, msg.Text)
	return nil
}

// streamer is the connector's native streaming, when it has one.
func (r *Renderer) streamer() (connectors.Streamer, bool) {
	st, ok := r.conn.(connectors.Streamer)
	return st, ok && r.limits.NativeStreaming
}

// sendStream shows page i through the platform's native streaming: the
// page starts as a stream, grows by appends (which spend nothing of the
// workspace's edit budget), and stops with its final form when complete.
// A page whose text changed other than by growing stops with that text.
func (r *Renderer) sendStream(ctx context.Context, st connectors.Streamer, i int, msg connectors.Message, complete bool) error {
	if i == len(r.pages) {
		if complete {
			ref, err := r.conn.Post(ctx, r.channel, r.thread, msg)
			if err == nil {
				r.pages = append(r.pages, page{ref: ref})
			}
			return err
		}
		ref, err := st.StartStream(ctx, r.channel, r.thread, msg)
		if err != nil {
			return err
		}
		r.pages = append(r.pages, page{ref: ref, streaming: true, streamed: msg.Text})
		r.record(ctx, i, msg.Text)
		return nil
	}
	p := &r.pages[i]
	if !p.streaming {
		if err := r.budget.Wait(ctx); err != nil {
			return err
		}
		return r.conn.Edit(ctx, p.ref, msg)
	}
	if complete || !strings.HasPrefix(msg.Text, p.streamed) {
		if err := st.StopStream(ctx, p.ref, msg); err != nil {
			return err
		}
		p.streaming = false
		return nil
	}
	if more := msg.Text[len(p.streamed):]; more != "" {
		if err := st.AppendStream(ctx, p.ref, more); err != nil {
			return err
		}
		p.streamed = msg.Text
		r.record(ctx, i, msg.Text)
	}
	return nil
}

// record keeps the page's text in the store while it streams.
func (r *Renderer) record(ctx context.Context, i int, text string) {
	if r.rec == nil {
		return
	}
	p := &r.pages[i]
	if p.recordID == 0 {
		m, err := r.rec.RecordStreaming(ctx, store.PostedMessage{Platform: r.conn.Name(), Channel: r.channel, Thread: r.thread, MessageID: p.ref.ID, Text: text})
		if err == nil {
			p.recordID = m.ID
		}
		return
	}
	r.rec.UpdateStreamingText(ctx, p.recordID, text)
}

// finish marks every page complete.
func (r *Renderer) finish(ctx context.Context) {
	f, canFinish := r.conn.(finisher)
	for _, p := range r.pages {
		if canFinish {
			f.Finish(ctx, p.ref)
		}
		if r.rec != nil && p.recordID != 0 {
			r.rec.FinishStreaming(ctx, p.recordID)
		}
	}
}

func (r *Renderer) maxText() int {
	if r.limits.MaxText <= 0 {
		return 4000
	}
	// Room for the error line a failed answer appends.
	return r.limits.MaxText
}
