package slack

import (
	"strings"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/opsbot/opsbot/connectors"
)

// Slack's Block Kit limits (https://docs.slack.dev/reference/block-kit/blocks).
const (
	// maxSection is the most characters of a section block's text.
	maxSection = 3000
	// maxBlocks is the most blocks of one message.
	maxBlocks = 50
	// maxText is the most characters of a message's text (the fallback
	// shown in notifications); Slack answers msg_too_long past it.
	maxText = 4000
	// maxFields is the most fields of one section; maxField their length.
	maxFields = 10
	maxField  = 2000
	// maxContext is the most characters of a context element.
	maxContext = 3000
	// maxButtonText is the most characters of a button's label.
	maxButtonText = 75
	// maxActions is the most elements of an actions block.
	maxActions = 25
)

// Block ids: Slack drops block_actions of a block without an id (and
// slack-go ignores them), so every block that can hold a button has one.
const (
	blockActions = "opsbot_actions"
	blockContext = "opsbot_context"
	blockFields  = "opsbot_fields"
	// blockFeedback holds an answer's feedback buttons.
	blockFeedback = "opsbot_feedback"
)

// render turns a neutral message into its text fallback and blocks,
// within Slack's limits: text in sections of at most maxSection characters
// cut at line ends, else after a word, and never inside a code fence (a fence longer than a
// section is closed and reopened), then fields, the context line and the
// buttons. The mentions of m.Notify open the text.
func render(m connectors.Message) (string, []slack.Block) {
	text := toMrkdwn(m.Text)
	if p := notifyPrefix(m.Notify); p != "" {
		text = p + " " + text
	}
	blocks := taskCards(m.Tasks)
	room := maxBlocks - 3 - len(blocks)
	for _, s := range sections(text, maxSection) {
		if room == 0 {
			break
		}
		blocks = append(blocks, slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, s, false, false), nil, nil))
		room--
	}
	if f := fieldsBlock(m.Fields); f != nil {
		blocks = append(blocks, f)
	}
	if m.Context != "" {
		ctx := truncate(toMrkdwn(m.Context), maxContext)
		blocks = append(blocks, slack.NewContextBlock(blockContext, slack.NewTextBlockObject(slack.MarkdownType, ctx, false, false)))
	}
	if a := actionsBlock(m.Buttons); a != nil {
		blocks = append(blocks, a)
	}
	if m.Feedback != "" {
		blocks = append(blocks, feedbackBlock(m.Feedback))
	}
	fallback := truncate(text, maxText)
	if fallback == "" {
		fallback = truncate(toMrkdwn(m.Context), maxText)
	}
	if fallback == "" && len(m.Tasks) > 0 {
		fallback = truncate(m.Tasks[len(m.Tasks)-1].Title, maxTaskText)
	}
	return fallback, blocks
}

// maxMessageCards is the most task cards a message shows, leaving the
// rest of Slack's 50 blocks to the text.
const maxMessageCards = 20

// taskCards are tasks as task_card blocks, one under the other in their
// order, at most maxMessageCards of them: every one still running first
// (its end must show), then the newest of those ended.
func taskCards(tasks []connectors.Task) []slack.Block {
	keep := make([]bool, len(tasks))
	n := 0
	for _, ended := range []bool{false, true} {
		for i := len(tasks) - 1; i >= 0 && n < maxMessageCards; i-- {
			done := tasks[i].Status == connectors.TaskComplete || tasks[i].Status == connectors.TaskError
			if done == ended && !keep[i] {
				keep[i], n = true, n+1
			}
		}
	}
	var blocks []slack.Block
	for i, t := range tasks {
		if keep[i] {
			blocks = append(blocks, taskCard(t))
		}
	}
	return blocks
}

func fieldsBlock(fields []connectors.Field) slack.Block {
	if len(fields) == 0 {
		return nil
	}
	var objs []*slack.TextBlockObject
	for _, f := range fields[:min(len(fields), maxFields)] {
		t := truncate("*"+escape(f.Title)+"*\n"+toMrkdwn(f.Value), maxField)
		objs = append(objs, slack.NewTextBlockObject(slack.MarkdownType, t, false, false))
	}
	return slack.NewSectionBlock(nil, objs, nil, slack.SectionBlockOptionBlockID(blockFields))
}

func actionsBlock(buttons []connectors.Button) slack.Block {
	if len(buttons) == 0 {
		return nil
	}
	var els []slack.BlockElement
	for _, b := range buttons[:min(len(buttons), maxActions)] {
		label := slack.NewTextBlockObject(slack.PlainTextType, truncate(b.Label, maxButtonText), false, false)
		btn := slack.NewButtonBlockElement(b.ActionID, b.Value, label)
		switch b.Style {
		case connectors.StylePrimary:
			btn.Style = slack.StylePrimary
		case connectors.StyleDanger:
			btn.Style = slack.StyleDanger
		}
		els = append(els, btn)
	}
	return slack.NewActionBlock(blockActions, els...)
}

// sections cuts mrkdwn text into pieces of at most limit characters, at
// line ends where it can, else after the last space that fits (only a word
// longer than a piece is cut inside); a code fence cut in two is closed at the end of
// one piece and reopened at the start of the next, so each piece shows its
// code as code.
func sections(text string, limit int) []string {
	if text == "" {
		return nil
	}
	const fence = "```"
	var out []string
	var cur strings.Builder
	inFence := false
	curLen := 0
	flush := func() {
		s := cur.String()
		if inFence {
			s += "\n" + fence
		}
		out = append(out, s)
		cur.Reset()
		curLen = 0
		if inFence {
			cur.WriteString(fence + "\n")
			curLen = utf8.RuneCountInString(fence) + 1
		}
	}
	room := func() int {
		r := limit - curLen
		if inFence {
			r -= len(fence) + 1 // the closing fence a cut adds
		}
		return r
	}
	lines := strings.SplitAfter(text, "\n")
	for _, l := range lines {
		for l != "" {
			n := utf8.RuneCountInString(l)
			if n <= room() {
				cur.WriteString(l)
				curLen += n
				if strings.HasPrefix(strings.TrimSpace(l), fence) {
					inFence = !inFence
				}
				break
			}
			if curLen > 0 && n <= limit-8 {
				flush() // the line fits a piece of its own
				continue
			}
			// A line longer than a piece: cut it after its last space
			// that fits; a word longer than the room starts a piece of
			// its own, and only a word longer than a piece is cut.
			head, atWord := wordCut(l, max(1, room()))
			if !atWord && curLen > 0 && !(inFence && curLen == len(fence)+1) {
				flush()
				continue
			}
			cur.WriteString(head)
			curLen += utf8.RuneCountInString(head)
			l = l[len(head):]
			flush()
		}
	}
	if cur.Len() > 0 && strings.TrimSpace(cur.String()) != fence {
		out = append(out, cur.String())
	}
	return out
}

// firstRunes is s's first n characters.
func firstRunes(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// wordCut is s's longest start of at most n characters that ends after a
// line break or a space (the last line break when one fits, else the last
// space), and true; or, when none fits (one word longer than n), s's first
// n characters and false.
func wordCut(s string, n int) (string, bool) {
	head := firstRunes(s, n)
	if len(head) == len(s) {
		return s, true
	}
	if i := strings.LastIndexByte(head, '\n'); i >= 0 {
		return head[:i+1], true
	}
	if i := strings.LastIndexByte(head, ' '); i >= 0 {
		return head[:i+1], true
	}
	return head, false
}

// truncate cuts s to at most n characters at a line break or a space where
// it can (a word longer than n is cut), marking the cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	head, _ := wordCut(s, n-1)
	if t := strings.TrimRight(head, " \n"); t != "" {
		head = t
	}
	return head + "…"
}

// feedbackBlock is the feedback buttons under the answer of turn: a
// context_actions block, whose clicks only the clicker sees answered.
func feedbackBlock(turn string) slack.Block {
	label := func(s string) *slack.TextBlockObject {
		return slack.NewTextBlockObject(slack.PlainTextType, s, false, false)
	}
	good := slack.NewFeedbackButton(label("Good answer"), "good:"+turn).WithAccessibilityLabel("Mark this answer as good")
	bad := slack.NewFeedbackButton(label("Bad answer"), "bad:"+turn).WithAccessibilityLabel("Mark this answer as bad")
	return slack.NewContextActionsBlock(blockFeedback, slack.NewFeedbackButtonsBlockElement(connectors.ActionFeedback, good, bad))
}
