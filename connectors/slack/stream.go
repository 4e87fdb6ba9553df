package slack

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/opsbot/opsbot/connectors"
)

// Native streaming: chat.startStream posts a message being written,
// chat.appendStream adds markdown to it, chat.stopStream ends it (with
// the rest of the text, and blocks shown below it: fields, the context
// line, buttons). Slack ends a stream on its own about five minutes after
// it started, and a person may stop it (stopped_by_user): appends and the
// stop then fail with message_not_in_streaming_state, returned as
// connectors.ErrStreamEnded so that the renderer finishes by chat.update.

// endedCodes are Slack's answers for a stream that no longer streams.
var endedCodes = []string{"message_not_in_streaming_state", "stopped_by_user", "message_not_found"}

func isEnded(err error) bool { return errors.Is(err, connectors.ErrStreamEnded) }

// streams are the live native streams, by message ts, with the text
// streamed into each (a stop adds only what is new).
type streams struct {
	mu   sync.Mutex
	text map[string]string
	// edited are the answers going on by chat.update instead (a stream
	// declined to share the workspace's budgets), by ts, with the time of
	// their last change.
	edited map[string]time.Time
	// starting counts the native streams decided on and not started yet
	// (waiting for chat.startStream's budget).
	starting int
	// declining counts the answers native said no to, not posted yet.
	declining int
	// plain are the messages StartStream posted complete instead (no
	// thread or recipient, or native said no), until the renderer learns
	// they do not stream: a stop of one costs no call.
	plain map[string]bool
	// cards are the task cards shown in each live stream, as last sent
	// (tasks.go).
	cards map[string][]connectors.Task
}

func newStreams() *streams {
	return &streams{text: map[string]string{}, edited: map[string]time.Time{}, plain: map[string]bool{}, cards: map[string][]connectors.Task{}}
}

// posted notes a message StartStream posted complete.
func (s *streams) posted(ts string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ts != "" {
		s.plain[ts] = true
	}
}

// wasPosted reports whether ts is a message StartStream posted complete,
// and forgets it: the renderer goes on by edits.
func (s *streams) wasPosted(ts string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ok := s.plain[ts]
	delete(s.plain, ts)
	return ok
}

// editActive is how long after its last edit an answer by edits counts as
// still being written.
const editActive = 30 * time.Second

// native decides whether a new answer streams natively: Slack's budgets
// for appends (Tier 4, ~100/min) and for edits (chat.update, Tier 3,
// ~50/min) are separate, so with many answers at once about one in three
// goes on by edits, and both budgets carry updates — every thread then
// shows progress more often than either budget alone would allow.
func (s *streams) native(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	edits := 0
	for ts, at := range s.edited {
		if now.Sub(at) > editActive {
			delete(s.edited, ts)
			continue
		}
		edits++
	}
	if len(s.text)+s.starting > 2*(edits+s.declining)+1 {
		s.declining++
		return false
	}
	s.starting++
	return true
}

// started notes that a stream native said yes to has started, or failed.
func (s *streams) started() {
	s.mu.Lock()
	s.starting--
	s.mu.Unlock()
}

// editing notes a change to an answer going on by edits.
func (s *streams) editing(ts string, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.edited[ts]; ok {
		s.edited[ts] = now
	}
}

// declined notes an answer native said no to as posted (ts "": it could
// not be); it goes on by edits.
func (s *streams) declined(ts string, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.declining--
	if ts != "" {
		s.edited[ts] = now
	}
}

func (s *streams) has(ts string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.text[ts]
	return ok
}

func (s *streams) get(ts string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.text[ts]
	return t, ok
}

func (s *streams) set(ts, text string) {
	s.mu.Lock()
	s.text[ts] = text
	s.mu.Unlock()
}

func (s *streams) drop(ts string) {
	s.mu.Lock()
	delete(s.text, ts)
	delete(s.cards, ts)
	s.mu.Unlock()
}

// streamCall is call for a stream method: Slack's "this message no longer
// streams" becomes ErrStreamEnded, and the stream is forgotten.
func (c *Connector) streamCall(ctx context.Context, method string, ref connectors.Ref, fn func() error) error {
	err := c.call(ctx, method, ref.Channel, fn)
	if code := errorCode(err); err != nil && slices.Contains(endedCodes, code) {
		c.live.drop(ref.ID)
		return fmt.Errorf("slack: %s: %s: %w", method, code, connectors.ErrStreamEnded)
	}
	return err
}

// StartStream posts a message being written in d's thread, answering
// d.Recipient (Slack requires the recipient's user and team in a
// channel). Without a thread, or without a recipient outside a direct
// message, it posts m complete instead: appends to it then report
// ErrStreamEnded and the renderer goes on by edits.
func (c *Connector) StartStream(ctx context.Context, d connectors.Dest, m connectors.Message) (connectors.Ref, error) {
	team := d.Workspace
	if team == "" {
		team = c.team()
	}
	if d.Thread == "" || (d.Recipient.ID == "" && !isDM(d.Channel)) {
		ref, err := c.Post(ctx, d, m)
		c.live.posted(ref.ID)
		return ref, err
	}
	// An empty message is a roll-over: the answer already streams, and
	// goes on in a stream. Any other is a new answer, which native may
	// send on by edits instead: posted with its first words, or its
	// first task cards (an answer whose commands come before its words),
	// as blocks (Message.Tasks), which its edits keep.
	takeOver := m.Text == "" && m.Context == "" && len(m.Tasks) == 0
	if !takeOver && !c.live.native(time.Now()) {
		ref, err := c.Post(ctx, d, m)
		c.live.declined(ref.ID, time.Now())
		c.live.posted(ref.ID)
		return ref, err
	}
	text := toMrkdwnStream(m.Text)
	opts := []slack.MsgOption{slack.MsgOptionTS(d.Thread), slack.MsgOptionTaskDisplayMode(slack.TaskDisplayModeTimeline)}
	switch {
	case len(m.Tasks) > 0:
		// The first cards go in the start's chunks (chat.startStream
		// takes them as chat.appendStream does): they cost no append.
		var chunks []slack.StreamChunk
		if text != "" {
			chunks = append(chunks, slack.NewMarkdownTextChunk(text))
		}
		for _, t := range m.Tasks {
			chunks = append(chunks, taskChunk(t))
		}
		opts = append(opts, slack.MsgOptionChunks(chunks...))
	case text != "":
		opts = append(opts, slack.MsgOptionMarkdownText(text))
	}
	if d.Recipient.ID != "" {
		opts = append(opts, slack.MsgOptionRecipientUserID(d.Recipient.ID), slack.MsgOptionRecipientTeamID(team))
	}
	// A start once sent runs to its answer, even if ctx ends meanwhile:
	// cut short, it could leave a stream Slack started that nobody knows
	// of to stop. Only its wait for the budget ends with ctx (the
	// renderer gives up a roll-over that way, bot/render's dropRoll); the
	// HTTP client's timeout bounds the call.
	var ts string
	err := c.call(ctx, "chat.startStream", d.Channel, func() (err error) {
		_, ts, err = c.api.StartStreamContext(context.WithoutCancel(ctx), d.Channel, opts...)
		return err
	})
	if err == nil {
		c.live.set(ts, m.Text)
	}
	if !takeOver {
		c.live.started()
	}
	if err != nil {
		return connectors.Ref{}, err
	}
	ref := c.ref(d.Channel, d.Thread, ts)
	for _, t := range m.Tasks {
		c.live.card(ts, t)
		c.taskSign(ref, t)
	}
	return ref, nil
}

// AppendStream adds text to the stream's text.
func (c *Connector) AppendStream(ctx context.Context, ref connectors.Ref, text string) error {
	sofar, ok := c.live.get(ref.ID)
	if !ok {
		c.live.wasPosted(ref.ID)
		return fmt.Errorf("slack: chat.appendStream: %w", connectors.ErrStreamEnded)
	}
	if text == "" {
		return nil
	}
	err := c.streamCall(ctx, "chat.appendStream", ref, func() error {
		_, _, err := c.api.AppendStreamContext(ctx, ref.Channel, ref.ID, slack.MsgOptionMarkdownText(toMrkdwnStream(text)))
		return err
	})
	if err == nil {
		c.live.set(ref.ID, sofar+text)
	}
	return err
}

// StopStream ends the stream with its final form: the text not streamed
// yet (appended first), then the final message's fields, context line
// and buttons below it. A final text that does not extend what was streamed (a rewrite) is
// set by chat.update once the stream has stopped. A stream this process
// did not start (a previous one's, cut by a crash: recovery finishes it)
// is stopped as it stands, then updated, for Slack refuses an update to a
// stream it still keeps (streaming_state_conflict).
func (c *Connector) StopStream(ctx context.Context, ref connectors.Ref, final connectors.Message) error {
	sofar, ok := c.live.get(ref.ID)
	if !ok && c.live.wasPosted(ref.ID) {
		return fmt.Errorf("slack: chat.stopStream: %w", connectors.ErrStreamEnded)
	}
	if ok && len(final.Tasks) > 0 {
		// The message goes on by edits with its cards (the renderer's,
		// some still running): the stop leaves them as they are, and the
		// update shows them as blocks, which later edits change.
		c.live.keepCards(ref.ID)
		if err := c.stop(ctx, ref, "", nil); err != nil {
			return err
		}
		return c.update(ctx, ref, final)
	}
	if !ok || !strings.HasPrefix(final.Text, sofar) {
		// The update replaces all the stream showed: its cards go in it
		// as blocks, as the stop left them.
		if len(final.Tasks) == 0 {
			final.Tasks = c.live.ended(ref.ID)
		}
		if err := c.stop(ctx, ref, "", nil); err != nil {
			return err
		}
		return c.update(ctx, ref, final)
	}
	// The rest of the text goes by appendStream (Tier 4), shown at once,
	// and the stop carries only the blocks: chat.stopStream is Tier 2,
	// shared by every answer in the workspace, and an answer's last words
	// must not wait for its budget (issue 28 item 4).
	if more := final.Text[len(sofar):]; more != "" {
		if err := c.AppendStream(ctx, ref, more); err != nil {
			return err
		}
	}
	tail := final
	tail.Text = ""
	_, blocks := render(tail)
	return c.stop(ctx, ref, "", blocks)
}

// stop calls chat.stopStream with the rest of the text and the blocks,
// and the final status of every task card still open (tasks.go): once
// stopped, a stream's cards can no longer change.
func (c *Connector) stop(ctx context.Context, ref connectors.Ref, more string, blocks []slack.Block) error {
	var opts []slack.MsgOption
	chunks := c.live.closing(ref.ID)
	switch {
	case len(chunks) > 0 && more != "":
		chunks = append([]slack.StreamChunk{slack.NewMarkdownTextChunk(toMrkdwnStream(more))}, chunks...)
		fallthrough
	case len(chunks) > 0:
		opts = append(opts, slack.MsgOptionChunks(chunks...))
	case more != "":
		opts = append(opts, slack.MsgOptionMarkdownText(toMrkdwnStream(more)))
	}
	if len(blocks) > 0 {
		opts = append(opts, slack.MsgOptionBlocks(blocks...))
	}
	err := c.streamCall(ctx, "chat.stopStream", ref, func() error {
		_, _, err := c.api.StopStreamContext(ctx, ref.Channel, ref.ID, opts...)
		return err
	})
	if err == nil {
		c.live.drop(ref.ID)
	}
	return err
}

// toMrkdwnStream is the text of a stream: markdown_text is Slack's
// markdown (CommonMark), so only the people are rendered.
func toMrkdwnStream(text string) string {
	return connectors.RenderAllMentions(text, mention, groupMention)
}

// isDM reports whether a channel id is a direct message (D…).
func isDM(channel string) bool { return strings.HasPrefix(channel, "D") }

// Thinking shows status ("is thinking…") under the thread until the bot's
// next message there (assistant.threads.setStatus). It is a courtesy: it
// never waits for the method's budget, and fails quietly when Slack does
// not show statuses in that thread.
func (c *Connector) Thinking(ctx context.Context, d connectors.Dest, status string) error {
	const method = "assistant.threads.setStatus"
	if status != "" && c.keptStatus(d) {
		c.Working(d, status)
		return nil
	}
	if d.Thread == "" || !c.bud.allow(c.team(), method, d.Channel) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, lookupLimit)
	defer cancel()
	err := c.api.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{ChannelID: d.Channel, ThreadTS: d.Thread, Status: status})
	if err := c.bud.limited(c.team(), method, d.Channel, err); err != nil {
		return &apiError{method: method, code: errorCode(err)}
	}
	return nil
}
