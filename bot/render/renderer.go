package render

import (
	"context"
	"errors"
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
// restart can finalize those a crash left half-written. A message is
// recorded before it is posted (RecordStreaming with a placeholder id,
// store.PendingMessageID), and its platform id is filled in once the post
// returns (PostedStreaming): a crash between the two leaves a record that
// recovery finds. *store.Store implements it.
type StreamRecorder interface {
	RecordStreaming(ctx context.Context, m store.PostedMessage) (store.PostedMessage, error)
	PostedStreaming(ctx context.Context, id int64, messageID, text string) error
	UpdateStreamingText(ctx context.Context, id int64, text string) error
	FinishStreaming(ctx context.Context, id int64) error
}

// Renderer streams one answer into a thread by editing messages: the first
// visible text is posted at once, later text is coalesced into at most one
// edit per interval (the platform's per-message limit, stretched to share
// the workspace's budget), and text past the platform's length limit goes
// on in a new message. Tool activity shows in the message's context line,
// so the answer text is exactly what the model said.
type Renderer struct {
	conn   connectors.Connector
	budget *EditBudget
	rec    StreamRecorder // may be nil
	log    *slog.Logger
	dest   connectors.Dest
	limits connectors.Limits
	// ctx is for the platform's requests and every wait: it ends when
	// the bot shuts down, after a grace for final edits.
	ctx context.Context
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
	waiting  bool            // the last status line is a wait the next line replaces
	// placeholding: the one status line is PlaceholderLine (placeholder.go).
	placeholding bool
	errText      string
	dirty        bool
	done         bool
	wake         chan struct{}
	finished     chan struct{}

	// owned by run
	pages []page
	// cuts are where pages end early (byte offsets into the answer): a
	// native stream rolled over before its lifetime, and the text after
	// went on in a new one.
	cuts     []int
	shownAt  time.Time
	failures int // flushes that could not show a page
	// lastVisible is when the platform last took a change of the answer;
	// onGap (set by ObserveGaps, read under mu) hears each gap.
	lastVisible time.Time
	onGap       func(time.Duration)
	// rolling receives the stream started to take over from the last
	// page's (roll.go); nil when no roll-over is under way. bg counts
	// the old streams being stopped in the background.
	rolling chan rolled
	ready   *rolled // what rolling sent, until the new stream takes over
	// rollCancel gives up the start rolling waits for, if not sent yet
	// (dropRoll).
	rollCancel context.CancelFunc
	bg         sync.WaitGroup
	// tasks are the answer's task cards by id, in taskOrder; taskDirty
	// the ids changed since they were last sent (tasks.go).
	tasks     map[string]connectors.Task
	taskOrder []string
	taskDirty []string
	// taskPage is the page whose stream shows each task's card (hold.go);
	// owned by run.
	taskPage map[string]int
	// cardsOnRecord are the open cards last recorded for each page's
	// record, by its id (cards_record.go); owned by run.
	cardsOnRecord map[int64]string
	// feedback names the turn whose feedback buttons go under the
	// answer's end (Feedback); "" for none.
	feedback string
	// taskLimit is the longest one task may run, when the bot said
	// (TaskLimit, cardlife.go); 0: unknown.
	taskLimit time.Duration
	// quiet says the last change sent showed nothing new: a stream
	// stopped with nothing more to show once its last words were in.
	quiet bool

	// opening: the placeholder is an empty native stream, where task
	// cards will show (placeholder.go).
	opening bool
	// longRunning is the task that has run stopLineAfter, whose line the
	// control message shows (control.go).
	longRunning string
	// carry is the last page's new text, taken by the flush's cards
	// (tasks.go).
	carry *carry
	// nextTurn is the last page, when the flush has just appended its
	// text: its cards wait for its next text (tasks.go); else -1.
	nextTurn int
	// control is the message below the stream that shows the status line
	// and Stop (control.go); nil until one is needed. Owned by run.
	control *page
}

// page is one platform message of the answer.
type page struct {
	ref      connectors.Ref
	recordID int64
	// posted says the record names the platform's message (not yet the
	// placeholder it was recorded with before the post).
	posted bool
	shown  string // what the platform shows now
	// streaming is set while the page is a native stream; streamed is the
	// text appended to it so far.
	streaming bool
	streamed  string
	context   string    // the context line the stream shows
	started   time.Time // when the stream started
	// rollAt is when the stream rolls over to a new one (roll.go).
	rollAt time.Time
	// end is where the page's body ends in the answer, as last shown.
	end int
	// held: the page's stream was rolled over from, and is kept open for
	// its task cards still running (hold.go).
	held bool
	// byEdits: the page goes on by edits (it was posted, or its stream
	// ended or stopped before the answer's end), and where messages show
	// cards its edits show its cards (msgcards.go).
	byEdits bool
}

// NewRenderer starts a renderer for an answer in d's thread. Its requests
// to the platform, and its waits, end with ctx. Stop it with Close.
func NewRenderer(ctx context.Context, conn connectors.Connector, budget *EditBudget, rec StreamRecorder, log *slog.Logger, d connectors.Dest, buttons ...connectors.Button) *Renderer {
	r := &Renderer{ctx: ctx, conn: conn, budget: budget, rec: rec, log: log, dest: d,
		limits: conn.Limits(), buttons: buttons, red: redactorOf(conn), wake: make(chan struct{}, 1), finished: make(chan struct{}), nextTurn: -1}
	if r.log == nil {
		r.log = slog.Default()
	}
	leave := budget.Join()
	go func() {
		defer close(r.finished)
		defer leave()
		r.think()
		r.run()
	}()
	return r
}

// thinkingStatus is what a platform that can shows while the model thinks.
const thinkingStatus = "is thinking…"

// think shows that the answer is being worked on, where the platform can
// (connectors.Thinker), until its first words post.
func (r *Renderer) think() {
	if th, ok := r.conn.(connectors.Thinker); ok && r.dest.Thread != "" {
		if err := th.Thinking(r.ctx, r.dest, thinkingStatus); err != nil {
			r.log.Debug("thinking status not shown", "channel", r.dest.Channel, "err", err)
		}
	}
}

// Write adds a piece of the answer.
func (r *Renderer) Write(delta string) {
	if delta == "" {
		return
	}
	r.mu.Lock()
	r.unplaceholdLocked()
	r.text.WriteString(delta)
	r.dirty = true
	r.mu.Unlock()
	r.poke()
}

// Replace makes text the whole of what the message shows, for views that
// do not only grow (a command's output showing its tail).
func (r *Renderer) Replace(text string) {
	r.mu.Lock()
	r.unplaceholdLocked()
	r.text.Reset()
	r.text.WriteString(text)
	r.dirty, r.replaced = true, true
	r.mu.Unlock()
	r.poke()
}

// MaxText is the most text one message of the platform holds.
func (r *Renderer) MaxText() int { return r.maxText() }

// Status shows a line of tool activity; replace swaps the last line (a
// "running…" line becoming its result), except where the platform keeps
// every line in view (a terminal): there each line is shown.
func (r *Renderer) Status(line string, replace bool) {
	r.setStatus(line, replace, false)
}

// Waiting shows a status line that lasts only until the next one: a wait
// (for an approval) that ends when what it waited for starts or ends.
func (r *Renderer) Waiting(line string) {
	r.setStatus(line, true, true)
}

func (r *Renderer) setStatus(line string, replace, waiting bool) {
	r.mu.Lock()
	r.settled = r.text.Len()
	replace = replace || r.waiting
	r.waiting, r.placeholding = waiting, false
	if replace && len(r.status) > 0 && !r.limits.KeepsStatus {
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
// when the answer ended in an error, and the buttons go, as does a wait's
// line (Waiting): the answer waits for nothing any more (a restart or a
// Stop cut the wait; err says so). It returns once the platform has the
// final text (or ctx ends).
func (r *Renderer) Close(ctx context.Context, err error) {
	r.mu.Lock()
	if err != nil {
		r.errText = err.Error()
	}
	if r.waiting {
		r.status, r.waiting = r.status[:len(r.status)-1], false
	}
	r.placeholding = false
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
	ctx := r.ctx
	placeholder := r.placeholderDue()
	for {
		select {
		case <-r.wake:
		case <-placeholder:
			placeholder = nil
			r.placehold()
		case <-r.rollTimer():
			r.roll(ctx)
		case <-r.holdTimer():
			r.mu.Lock()
			r.dirty = true
			r.mu.Unlock()
		case res := <-r.rolling:
			r.ready = &res
			r.mu.Lock()
			r.dirty = true
			r.mu.Unlock()
		case <-ctx.Done():
			r.log.Warn("answer left unfinished: opsbot is shutting down", "channel", r.dest.Channel, "thread", r.dest.Thread)
			return
		}
		for {
			r.mu.Lock()
			dirty := r.dirty
			r.mu.Unlock()
			if !dirty {
				break
			}
			if len(r.pages) > 0 && !r.pace(ctx) {
				break
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
// budget is waited for when the edit is sent. It reports false when ctx
// ended first.
func (r *Renderer) pace(ctx context.Context) bool {
	return Sleep(ctx, time.Until(r.shownAt.Add(r.limits.EditInterval)))
}

// Sleep waits d, or until ctx ends; it reports whether d passed.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
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
	if text == "" && status == "" && done && len(r.pages) > 0 {
		// A placeholder was shown, and the answer ended without a word.
		text = "(ended without an answer)"
	}
	if text == "" && (status == "" || r.controlled(0)) && !done && len(r.pages) == 0 && (r.hasTasks() || r.isOpening()) {
		// Task cards before the first words (a command, a wait for its
		// approval), or the placeholder where they will show: they need
		// a stream; a status line goes below it (control.go). Where
		// messages show cards, the first ones open it: the platform may
		// then post it instead, to go on by edits (msgcards.go).
		msg := connectors.Message{Tasks: r.cardsFor(0)}
		if !r.show(ctx, 0, msg, false) {
			return false
		}
		r.placed(0, msg.Tasks)
		r.sendTasks(ctx)
		r.showControl(ctx, r.controlLine(status))
		r.shownAt = time.Now()
		return false
	}
	if text == "" && status == "" && (!done || len(r.pages) == 0) && !r.cardsByEdits() {
		// Nothing to show: an answer that ends without a word posts no
		// empty message. Cards may go into a stream open already, and
		// Stop below it.
		r.sendTasks(ctx)
		if len(r.pages) > 0 {
			r.updateControl(ctx, status, done)
		}
		return done
	}
	r.rollNow(ctx)
	if done && r.rolling != nil && !r.dropRoll(ctx, text) {
		// A new stream is starting: the rest goes on in it.
		r.awaitRoll(ctx)
	}
	pages := splitPages(text, r.pageLimit(), r.cuts)
	r.stopRolled(ctx, pages)
	r.carryText(pages)
	r.sendTasks(ctx) // before the stream may stop; with the last page's new text
	r.carry = nil
	// what the last page streamed before this flush's turn
	nBefore, sentBefore := len(r.pages), ""
	if nBefore > 0 {
		sentBefore = r.pages[nBefore-1].streamed
	}
	for i, p := range pages {
		msg := connectors.Message{Text: p.String()}
		last := i == len(pages)-1
		if last && i > 0 && p.Body == "" {
			// Nothing yet after a roll-over: no empty message, unless the
			// answer's last status line has nowhere else to go.
			if !done || (status == "" && len(r.pages) <= i) {
				break
			}
			msg.Text = ""
		}
		if last {
			msg.Context = status
			switch {
			case done:
				msg.Feedback = r.feedbackTurn()
			case r.controlled(i):
				msg.Context = "" // shown below, with the buttons (control.go)
			default:
				msg.Buttons = r.buttons
			}
		}
		msg.Tasks = r.cardsFor(i)
		posting := i == len(r.pages)
		if !r.show(ctx, i, msg, done || !last) {
			// A page that could not be shown: later pages wait for it,
			// and the next flush tries again — a few times, once the
			// answer is complete, before giving up on the platform.
			r.failures++
			r.shownAt = time.Now()
			if done && r.failures >= 3 {
				r.log.Warn("giving up on showing the answer", "channel", r.dest.Channel, "thread", r.dest.Thread)
				return true
			}
			r.mu.Lock()
			r.dirty = true
			r.mu.Unlock()
			r.poke()
			return false
		}
		if posting {
			r.placed(i, msg.Tasks)
		}
		r.pages[i].end = p.Start + len(p.Body)
	}
	if n := len(r.pages); !done && n > 0 && n == nBefore && n == len(pages) && r.pages[n-1].streamed != sentBefore {
		r.nextTurn = n - 1
	}
	r.sendTasks(ctx)
	r.nextTurn = -1
	r.recordMessageCards(ctx)
	r.updateControl(ctx, status, done)
	r.shownAt = time.Now()
	if !done && r.full() {
		r.roll(ctx)
	}
	return done
}

// show posts page i or edits it if it changed, waiting out rate limits;
// it reports whether the page now shows msg. complete says the page will
// not change again.
func (r *Renderer) show(ctx context.Context, i int, msg connectors.Message, complete bool) bool {
	if i > len(r.pages) {
		return false // an earlier page is missing
	}
	key := pageKey(msg)
	if i < len(r.pages) && (r.pages[i].held || r.pages[i].shown == key && !(complete && r.pages[i].streaming)) {
		return true // a held stream stops once its cards end (hold.go)
	}
	for attempt := 0; attempt < 5; attempt++ {
		r.quiet = false
		err := r.send(ctx, i, msg, complete)
		if err == nil {
			if i < len(r.pages) {
				r.pages[i].shown = key
			}
			if !r.quiet {
				r.visible()
			}
			return true
		}
		wait, limited := connectors.RetryAfter(err)
		if !limited {
			r.log.Warn("stream update failed", "channel", r.dest.Channel, "err", err)
			return false
		}
		r.budget.Penalize(wait)
		if !Sleep(ctx, wait) {
			return false
		}
	}
	return false
}

// pageKey is what show compares to tell whether a page changed.
func pageKey(msg connectors.Message) string {
	return msg.Text + "\x00" + msg.Context + fmt.Sprint(len(msg.Buttons)) + "\x00" + msg.Feedback + fmt.Sprint(msg.Tasks)
}

func (r *Renderer) send(ctx context.Context, i int, msg connectors.Message, complete bool) error {
	if st, ok := r.streamer(); ok && r.streams(i, msg, complete) {
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
	rid := r.reserve(ctx, msg.Text)
	r.recordOpening(ctx, rid, msg.Tasks)
	ref, err := r.conn.Post(ctx, r.dest, msg)
	if err != nil {
		r.unreserve(ctx, rid)
		return err
	}
	r.pages = append(r.pages, page{ref: ref, recordID: rid, byEdits: true})
	r.record(ctx, i, msg.Text)
	return nil
}

// streams reports whether page i goes on as a native stream: a page
// streaming now does; a new one does unless it is complete, or it opens
// with a status line (a command running) on a platform whose streams show
// their context line and buttons only once they stop (Slack's): posted
// instead, it shows the line and Stop at once, and goes on by edits.
func (r *Renderer) streams(i int, msg connectors.Message, complete bool) bool {
	if i < len(r.pages) {
		return r.pages[i].streaming
	}
	return !complete && (msg.Context == "" || r.limits.StreamEdits)
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
		rid := r.reserve(ctx, msg.Text)
		r.recordOpening(ctx, rid, msg.Tasks)
		ref, err := st.StartStream(ctx, r.dest, msg)
		if err != nil {
			r.unreserve(ctx, rid)
			return err
		}
		p := page{ref: ref, recordID: rid, streaming: true, streamed: msg.Text, context: msg.Context, started: time.Now(),
			rollAt: r.budget.RollSlot(time.Now(), r.limits.StreamLifetime)}
		if _, cards := r.taskUpdater(); cards && errors.Is(st.AppendStream(ctx, ref, ""), connectors.ErrStreamEnded) {
			// The platform posted it complete instead (Slack spreads
			// its stream starts): it goes on by edits from now, its
			// Stop and status line on it (connectors.TaskMessenger).
			p.streaming, p.byEdits = false, true
		}
		r.pages = append(r.pages, p)
		r.record(ctx, i, msg.Text)
		return nil
	}
	p := &r.pages[i]
	grows := strings.HasPrefix(msg.Text, p.streamed)
	// Where a live stream cannot be edited, its context line and buttons
	// show only once it stops: a new status line (a command started, a
	// wait for approval) stops it, so that the line and Stop show at
	// once; the page goes on by edits.
	restyled := msg.Context != p.context && !r.limits.StreamEdits
	switch {
	case complete || restyled || (!grows && !r.limits.StreamEdits):
		if more := msg.Text[min(len(p.streamed), len(msg.Text)):]; grows && more != "" {
			// The last words show at once; the stop may wait for its
			// budget (Slack's Tier 2, shared by the workspace).
			if err := st.AppendStream(ctx, p.ref, more); err != nil {
				return r.streamEnded(ctx, i, msg, err)
			}
			p.streamed = msg.Text
			r.record(ctx, i, msg.Text)
			r.visible()
			r.quiet = msg.Context == p.context && len(msg.Buttons) == 0 && msg.Feedback == ""
		}
		if err := st.StopStream(ctx, p.ref, msg); err != nil {
			return r.streamEnded(ctx, i, msg, err)
		}
		p.streaming, p.byEdits = false, !complete
		return nil
	case !grows || (msg.Context != p.context && r.limits.StreamEdits):
		// The platform edits a live stream: a rewrite, or a new context
		// line, shows at once.
		if err := r.budget.Wait(ctx); err != nil {
			return err
		}
		if err := r.conn.Edit(ctx, p.ref, msg); err != nil {
			return err
		}
		p.streamed, p.context = msg.Text, msg.Context
		r.record(ctx, i, msg.Text)
		return nil
	}
	if more := msg.Text[len(p.streamed):]; more != "" {
		if err := st.AppendStream(ctx, p.ref, more); err != nil {
			return r.streamEnded(ctx, i, msg, err)
		}
		p.streamed = msg.Text
		r.record(ctx, i, msg.Text)
	}
	return nil
}

// streamEnded handles a failed change to page i's stream: when the
// platform ended the stream, the message keeps what was streamed, and an
// edit brings it up to msg; later changes are edits. Another error is
// returned as it is.
func (r *Renderer) streamEnded(ctx context.Context, i int, msg connectors.Message, err error) error {
	if !errors.Is(err, connectors.ErrStreamEnded) {
		return err
	}
	r.log.Info("the platform ended a stream early; going on by edits", "channel", r.dest.Channel, "err", err)
	r.pages[i].streaming, r.pages[i].byEdits = false, true
	msg.Tasks = r.cardsFor(i) // its cards, as blocks, where messages show them
	if err := r.budget.Wait(ctx); err != nil {
		return err
	}
	if err := r.conn.Edit(ctx, r.pages[i].ref, msg); err != nil {
		return err
	}
	r.record(ctx, i, msg.Text)
	return nil
}

// reserve records a page about to be posted, before the post: the id of
// its record, or 0 (no recorder, or the write failed: the page is then
// recorded after its post, as best it can be).
func (r *Renderer) reserve(ctx context.Context, text string) int64 {
	if r.rec == nil {
		return 0
	}
	m, err := r.rec.RecordStreaming(ctx, store.PostedMessage{Platform: r.conn.Name(), Channel: r.dest.Channel, Thread: r.dest.Thread,
		MessageID: store.PendingMessageID(), Text: text})
	if err != nil {
		r.log.Warn("record an answer before posting it", "channel", r.dest.Channel, "err", err)
		return 0
	}
	return m.ID
}

// unreserve closes the record of a page whose post failed.
func (r *Renderer) unreserve(ctx context.Context, id int64) {
	if r.rec != nil && id != 0 {
		r.rec.FinishStreaming(ctx, id)
	}
}

// record keeps the page's text in the store while it streams.
func (r *Renderer) record(ctx context.Context, i int, text string) {
	if r.rec == nil {
		return
	}
	p := &r.pages[i]
	switch {
	case p.recordID == 0:
		m, err := r.rec.RecordStreaming(ctx, store.PostedMessage{Platform: r.conn.Name(), Channel: r.dest.Channel, Thread: r.dest.Thread, MessageID: p.ref.ID, Text: text})
		if err == nil {
			p.recordID, p.posted = m.ID, true
		}
	case !p.posted:
		if err := r.rec.PostedStreaming(ctx, p.recordID, p.ref.ID, text); err == nil {
			p.posted = true
		}
	default:
		r.rec.UpdateStreamingText(ctx, p.recordID, text)
	}
}

// finish forgets the record of every page: each is complete.
func (r *Renderer) finish(ctx context.Context) {
	r.bg.Wait()
	for _, p := range r.pages {
		if r.rec != nil && p.recordID != 0 {
			r.rec.FinishStreaming(ctx, p.recordID)
		}
	}
}

// pageLimit is the most text one page of the answer holds: a native
// stream may hold more than a message.
func (r *Renderer) pageLimit() int {
	if _, ok := r.streamer(); ok && r.limits.StreamMaxText > 0 {
		return r.limits.StreamMaxText
	}
	return r.maxText()
}

func (r *Renderer) maxText() int {
	if r.limits.MaxText <= 0 {
		return 4000
	}
	// Room for the error line a failed answer appends.
	return r.limits.MaxText
}
