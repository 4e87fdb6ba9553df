package slackfake

import (
	"encoding/json"
	"slices"
	"unicode/utf8"
)

// Block Kit's limits for a message's blocks (docs.slack.dev, Block Kit
// reference: blocks, block elements, composition objects).
const (
	maxBlockID       = 255
	maxSectionText   = 3000
	maxFieldText     = 2000
	maxSectionFields = 10
	maxHeaderText    = 150
	maxMarkdownText  = 12000
	maxActions       = 25
	maxContext       = 10
	maxButtonText    = 75
	maxActionID      = 255
	maxButtonValue   = 2000
	maxButtonURL     = 3000
)

// blockTypes are the block types a message may hold.
var blockTypes = []string{"actions", "context", "context_actions", "divider", "file", "header", "image", "input",
	"markdown", "rich_text", "section", "table", "video", "plan", "task_card"}

// elementTypes are the block elements Slack knows.
var elementTypes = []string{"button", "checkboxes", "datepicker", "datetimepicker", "email_text_input", "external_select",
	"feedback_buttons", "file_input", "icon_button", "image", "multi_channels_select", "multi_conversations_select",
	"multi_external_select", "multi_static_select", "multi_users_select", "number_input", "overflow", "plain_text_input",
	"radio_buttons", "rich_text_input", "static_select", "channels_select", "conversations_select", "timepicker",
	"url_text_input", "users_select", "workflow_button"}

// rawBlock is a block as validBlocks reads it: only the fields Slack's
// rules name, the rest left to the block's own checks.
type rawBlock struct {
	Type      string            `json:"type"`
	BlockID   *string           `json:"block_id"`
	Text      json.RawMessage   `json:"text"`
	Fields    []rawText         `json:"fields"`
	Accessory *rawElement       `json:"accessory"`
	Elements  []json.RawMessage `json:"elements"`
}

// rawText is a text object.
type rawText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// rawElement is a block element.
type rawElement struct {
	Type     string   `json:"type"`
	Text     *rawText `json:"text"`
	ActionID *string  `json:"action_id"`
	Value    *string  `json:"value"`
	URL      *string  `json:"url"`
	Style    string   `json:"style"`
}

// rawContext is a context block's element: a text object or an image.
type rawContext struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ImageURL  string          `json:"image_url"`
	SlackFile json.RawMessage `json:"slack_file"`
	AltText   string          `json:"alt_text"`
}

// textObject is raw as a text object; nil when there is none or it is
// not one.
func textObject(raw json.RawMessage) *rawText {
	var t rawText
	if len(raw) == 0 || json.Unmarshal(raw, &t) != nil {
		return nil
	}
	return &t
}

// validBlocks says whether Slack takes raw, a message's blocks: known
// block and element types with their required fields, within their
// lengths and counts, block_ids unique in the message and action_ids
// unique in their block. Plan and context_actions blocks are checked
// apart (plans, validContextActions).
func validBlocks(raw string) bool {
	var blocks []rawBlock
	if raw == "" {
		return true
	}
	if json.Unmarshal([]byte(raw), &blocks) != nil {
		return false
	}
	ids := map[string]bool{}
	for _, b := range blocks {
		if b.BlockID != nil {
			if *b.BlockID == "" || utf8.RuneCountInString(*b.BlockID) > maxBlockID || ids[*b.BlockID] {
				return false
			}
			ids[*b.BlockID] = true
		}
		if !slices.Contains(blockTypes, b.Type) || !validBlock(b) {
			return false
		}
	}
	return true
}

// validBlock checks one block by its type.
func validBlock(b rawBlock) bool {
	switch b.Type {
	case "section":
		return validSection(b)
	case "header":
		t := textObject(b.Text)
		return t != nil && t.Type == "plain_text" && validText(t, maxHeaderText)
	case "markdown":
		var text string
		return json.Unmarshal(b.Text, &text) == nil && text != "" && utf8.RuneCountInString(text) <= maxMarkdownText
	case "actions":
		return len(b.Elements) >= 1 && len(b.Elements) <= maxActions && validElements(b.Elements)
	case "context":
		return len(b.Elements) >= 1 && len(b.Elements) <= maxContext && validContextElements(b.Elements)
	}
	return true
}

// validSection checks a section: text or fields, within their lengths,
// and a valid accessory.
func validSection(b rawBlock) bool {
	t := textObject(b.Text)
	if len(b.Text) > 0 && t == nil || t == nil && len(b.Fields) == 0 || len(b.Fields) > maxSectionFields {
		return false
	}
	if t != nil && !validText(t, maxSectionText) {
		return false
	}
	for i := range b.Fields {
		if !validText(&b.Fields[i], maxFieldText) {
			return false
		}
	}
	return b.Accessory == nil || validElement(*b.Accessory, map[string]bool{})
}

// validText checks a text object: plain_text or mrkdwn, 1 to max
// characters.
func validText(t *rawText, max int) bool {
	n := utf8.RuneCountInString(t.Text)
	return (t.Type == "plain_text" || t.Type == "mrkdwn") && n >= 1 && n <= max
}

// validElements checks the interactive elements of an actions block,
// their action_ids unique in it.
func validElements(raw []json.RawMessage) bool {
	ids := map[string]bool{}
	for _, r := range raw {
		var e rawElement
		if json.Unmarshal(r, &e) != nil || !validElement(e, ids) {
			return false
		}
	}
	return true
}

// validElement checks a block element of a known type, a button's
// fields, and its action_id against ids, those of its block so far.
func validElement(e rawElement, ids map[string]bool) bool {
	if !slices.Contains(elementTypes, e.Type) {
		return false
	}
	if e.ActionID != nil {
		id := *e.ActionID
		if id == "" || utf8.RuneCountInString(id) > maxActionID || ids[id] {
			return false
		}
		ids[id] = true
	}
	if e.Type != "button" {
		return true
	}
	switch {
	case e.Text == nil || e.Text.Type != "plain_text" || !validText(e.Text, maxButtonText):
		return false
	case e.Value != nil && utf8.RuneCountInString(*e.Value) > maxButtonValue:
		return false
	case e.URL != nil && (*e.URL == "" || utf8.RuneCountInString(*e.URL) > maxButtonURL):
		return false
	}
	return e.Style == "" || e.Style == "primary" || e.Style == "danger"
}

// validContextElements checks a context block's elements: text objects
// and images.
func validContextElements(raw []json.RawMessage) bool {
	for _, r := range raw {
		var e rawContext
		if json.Unmarshal(r, &e) != nil {
			return false
		}
		switch e.Type {
		case "plain_text", "mrkdwn":
			if !validText(&rawText{e.Type, e.Text}, maxSectionText) {
				return false
			}
		case "image":
			if e.ImageURL == "" && len(e.SlackFile) == 0 || e.AltText == "" {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// UnmarshalJSON reads a block whose text is an object (section, header)
// or a string (markdown, kept as a text object of type "markdown").
func (b *Block) UnmarshalJSON(raw []byte) error {
	type plain Block
	var v struct {
		plain
		Text json.RawMessage `json:"text"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	*b = Block(v.plain)
	var s string
	switch {
	case len(v.Text) == 0 || string(v.Text) == "null":
	case json.Unmarshal(v.Text, &s) == nil:
		b.Text = &TextObj{Type: "markdown", Text: s}
	default:
		b.Text = &TextObj{}
		return json.Unmarshal(v.Text, b.Text)
	}
	return nil
}
